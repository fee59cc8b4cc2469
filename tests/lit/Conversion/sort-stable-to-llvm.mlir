// A stable tessel.sort breaks ties by each element's position along the
// axis. Where one of its operands holds those positions already (argsort's
// payload: make_range from 0), markSortPositions marks it and the network
// compares it; otherwise the positions ride along as a hidden operand. The
// network's loops (512 keys: looped) carry what moves, so their block
// arguments say which: the stage counter, then per operand 2 registers.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm | FileCheck %s

// The payload is make_range from 0: keys and payload only (no hidden pair).
// CHECK-LABEL: llvm.func @stable_arange_payload(
// CHECK: llvm.br ^[[OUTER:bb[0-9]+]]({{.*}} : i32, f32, f32, i32, i32)
// CHECK: ^[[OUTER]]({{[^)]*}}: i32, {{[^)]*}}: f32, {{[^)]*}}: f32, {{[^)]*}}: i32, {{[^)]*}}: i32):
// CHECK: llvm.icmp "slt"
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 2112 : i64} {
  func.func @stable_arange_payload(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #b>
    %ps = tessel.splat %p : tensor<512x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %x = tessel.load %pp : (tensor<512x!tessel.ptr<f32>, #b>) -> tensor<512xf32, #b>
    %k, %i = tessel.sort %x, %r {axis = 0 : i32, descending = false, stable = true, tessel.lds_offset = 0 : i64} : (tensor<512xf32, #b>, tensor<512xi32, #b>) -> (tensor<512xf32, #b>, tensor<512xi32, #b>)
    %qs = tessel.splat %q : tensor<512x!tessel.ptr<i32>, #b>
    %qq = tessel.addptr %qs, %r : tensor<512x!tessel.ptr<i32>, #b>, tensor<512xi32, #b>
    tessel.store %pp, %k : (tensor<512x!tessel.ptr<f32>, #b>, tensor<512xf32, #b>) -> ()
    tessel.store %qq, %i : (tensor<512x!tessel.ptr<i32>, #b>, tensor<512xi32, #b>) -> ()
    return
  }
}

// -----

// A loaded payload (the compiler cannot know what it holds): the positions
// ride along, a third pair of registers.
// CHECK-LABEL: llvm.func @stable_loaded_payload(
// CHECK: llvm.br ^[[OUTER:bb[0-9]+]]({{.*}} : i32, f32, f32, i32, i32, i32, i32)
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 2112 : i64} {
  func.func @stable_loaded_payload(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #b>
    %ps = tessel.splat %p : tensor<512x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %x = tessel.load %pp : (tensor<512x!tessel.ptr<f32>, #b>) -> tensor<512xf32, #b>
    %qs = tessel.splat %q : tensor<512x!tessel.ptr<i32>, #b>
    %qq = tessel.addptr %qs, %r : tensor<512x!tessel.ptr<i32>, #b>, tensor<512xi32, #b>
    %ids = tessel.load %qq : (tensor<512x!tessel.ptr<i32>, #b>) -> tensor<512xi32, #b>
    %k, %i = tessel.sort %x, %ids {axis = 0 : i32, descending = false, stable = true, tessel.lds_offset = 0 : i64} : (tensor<512xf32, #b>, tensor<512xi32, #b>) -> (tensor<512xf32, #b>, tensor<512xi32, #b>)
    tessel.store %pp, %k : (tensor<512x!tessel.ptr<f32>, #b>, tensor<512xf32, #b>) -> ()
    tessel.store %qq, %i : (tensor<512x!tessel.ptr<i32>, #b>, tensor<512xi32, #b>) -> ()
    return
  }
}

// -----

// A mark written by hand on a loaded payload: only markSortPositions' own
// counts (it removes any it finds), so the positions still ride along.
// CHECK-LABEL: llvm.func @hand_written_mark(
// CHECK: llvm.br ^[[OUTER:bb[0-9]+]]({{.*}} : i32, f32, f32, i32, i32, i32, i32)
// CHECK-NOT: tessel.sort_positions
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 2112 : i64} {
  func.func @hand_written_mark(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #b>
    %ps = tessel.splat %p : tensor<512x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %x = tessel.load %pp : (tensor<512x!tessel.ptr<f32>, #b>) -> tensor<512xf32, #b>
    %qs = tessel.splat %q : tensor<512x!tessel.ptr<i32>, #b>
    %qq = tessel.addptr %qs, %r : tensor<512x!tessel.ptr<i32>, #b>, tensor<512xi32, #b>
    %ids = tessel.load %qq : (tensor<512x!tessel.ptr<i32>, #b>) -> tensor<512xi32, #b>
    %k, %i = tessel.sort %x, %ids {axis = 0 : i32, descending = false, stable = true, tessel.lds_offset = 0 : i64, tessel.sort_positions = 1 : i64} : (tensor<512xf32, #b>, tensor<512xi32, #b>) -> (tensor<512xf32, #b>, tensor<512xi32, #b>)
    tessel.store %pp, %k : (tensor<512x!tessel.ptr<f32>, #b>, tensor<512xf32, #b>) -> ()
    tessel.store %qq, %i : (tensor<512x!tessel.ptr<i32>, #b>, tensor<512xi32, #b>) -> ()
    return
  }
}

// -----

// ... nor one out of range (operand 7 of 2), nor one on an unstable sort
// (which breaks no ties).
// CHECK-LABEL: llvm.func @out_of_range_mark(
// CHECK: llvm.br ^[[OUTER:bb[0-9]+]]({{.*}} : i32, f32, f32, i32, i32, i32, i32)
// CHECK: llvm.br ^[[OUTER2:bb[0-9]+]]({{.*}} : i32, f32, f32)
// CHECK-NOT: tessel.sort_positions
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 2112 : i64} {
  func.func @out_of_range_mark(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #b>
    %ps = tessel.splat %p : tensor<512x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %x = tessel.load %pp : (tensor<512x!tessel.ptr<f32>, #b>) -> tensor<512xf32, #b>
    %qs = tessel.splat %q : tensor<512x!tessel.ptr<i32>, #b>
    %qq = tessel.addptr %qs, %r : tensor<512x!tessel.ptr<i32>, #b>, tensor<512xi32, #b>
    %ids = tessel.load %qq : (tensor<512x!tessel.ptr<i32>, #b>) -> tensor<512xi32, #b>
    %k, %i = tessel.sort %x, %ids {axis = 0 : i32, descending = false, stable = true, tessel.lds_offset = 0 : i64, tessel.sort_positions = 7 : i64} : (tensor<512xf32, #b>, tensor<512xi32, #b>) -> (tensor<512xf32, #b>, tensor<512xi32, #b>)
    %u = tessel.sort %k {axis = 0 : i32, descending = true, stable = false, tessel.lds_offset = 0 : i64, tessel.sort_positions = 0 : i64} : (tensor<512xf32, #b>) -> tensor<512xf32, #b>
    tessel.store %pp, %u : (tensor<512x!tessel.ptr<f32>, #b>, tensor<512xf32, #b>) -> ()
    tessel.store %qq, %i : (tensor<512x!tessel.ptr<i32>, #b>, tensor<512xi32, #b>) -> ()
    return
  }
}

// -----

// A make_range from 1 is not the positions (each plus 1: it would order
// ties alike, but only a range from 0 is taken): they ride along.
// CHECK-LABEL: llvm.func @range_from_one(
// CHECK: llvm.br ^[[OUTER:bb[0-9]+]]({{.*}} : i32, f32, f32, i32, i32, i32, i32)
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 2112 : i64} {
  func.func @range_from_one(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #b>
    %r1 = tessel.make_range {start = 1 : i32, end = 513 : i32} : tensor<512xi32, #b>
    %ps = tessel.splat %p : tensor<512x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %x = tessel.load %pp : (tensor<512x!tessel.ptr<f32>, #b>) -> tensor<512xf32, #b>
    %k, %i = tessel.sort %x, %r1 {axis = 0 : i32, descending = false, stable = true, tessel.lds_offset = 0 : i64} : (tensor<512xf32, #b>, tensor<512xi32, #b>) -> (tensor<512xf32, #b>, tensor<512xi32, #b>)
    %qs = tessel.splat %q : tensor<512x!tessel.ptr<i32>, #b>
    %qq = tessel.addptr %qs, %r : tensor<512x!tessel.ptr<i32>, #b>, tensor<512xi32, #b>
    tessel.store %pp, %k : (tensor<512x!tessel.ptr<f32>, #b>, tensor<512xf32, #b>) -> ()
    tessel.store %qq, %i : (tensor<512x!tessel.ptr<i32>, #b>, tensor<512xi32, #b>) -> ()
    return
  }
}
