// RUN: tessel-opt %s --tessel-assign-layouts --tessel-plan-lds -verify-diagnostics

module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64, tessel.target = "gfx942"} {
  func.func @too_big(%y: tensor<256x128xf32>, %p: tensor<128x256x!tessel.ptr<f32>>) {
    // expected-error@below {{needs 135168 bytes of LDS (workgroup memory) for moving a tile between shapes ('tessel.permute'); the kernel's LDS plan totals 135168 bytes but gfx942 has 65536; use smaller tiles (a smaller block size) or fewer warps}}
    %t = tessel.permute %y {order = array<i32: 1, 0>} : tensor<256x128xf32> -> tensor<128x256xf32>
    tessel.store %p, %t : (tensor<128x256x!tessel.ptr<f32>>, tensor<128x256xf32>) -> ()
    return
  }
}
