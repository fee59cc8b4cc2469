// RUN: tessel-opt %s | tessel-opt | FileCheck %s

#blocked = #tessel.blocked<sizePerThread = [4], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
#blocked2 = #tessel.blocked<sizePerThread = [1, 4], threadsPerWave = [8, 8], wavesPerBlock = [4, 1], order = [1, 0]>

// CHECK-LABEL: func.func @round_trip
func.func @round_trip(%p: !tessel.ptr<f32>, %n: i32) {
  // CHECK: tessel.program_id 0 : i32
  %pid = tessel.program_id 0 : i32
  // CHECK: tessel.num_programs 2 : i32
  %np = tessel.num_programs 2 : i32
  // CHECK: tessel.make_range {end = 1032 : i32, start = 8 : i32} : tensor<1024xi32, #blocked>
  %r = tessel.make_range {start = 8 : i32, end = 1032 : i32} : tensor<1024xi32, #blocked>
  // CHECK: tessel.splat %{{.*}} : tensor<1024x!tessel.ptr<f32>, #blocked>
  %ps = tessel.splat %p : tensor<1024x!tessel.ptr<f32>, #blocked>
  %pp = tessel.addptr %ps, %r : tensor<1024x!tessel.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
  %ns = tessel.splat %n : tensor<1024xi32, #blocked>
  %m = arith.cmpi slt, %r, %ns : tensor<1024xi32, #blocked>
  // CHECK: tessel.load %{{.*}}, %{{.*}} {vec = 4 : i32}
  %v = tessel.load %pp, %m {vec = 4 : i32} : (tensor<1024x!tessel.ptr<f32>, #blocked>, tensor<1024xi1, #blocked>) -> tensor<1024xf32, #blocked>
  // CHECK: tessel.store
  tessel.store %pp, %v, %m : (tensor<1024x!tessel.ptr<f32>, #blocked>, tensor<1024xf32, #blocked>, tensor<1024xi1, #blocked>) -> ()
  // CHECK: tessel.load %{{.*}} : (!tessel.ptr<f32>) -> f32
  %s = tessel.load %p : (!tessel.ptr<f32>) -> f32
  return
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<16xf32, #tessel.slice<dim = 0, parent = #blocked2>>) {
  // CHECK: tessel.expand_dims %{{.*}} {axis = 0 : i32}
  %e = tessel.expand_dims %x {axis = 0 : i32} : tensor<16xf32, #tessel.slice<dim = 0, parent = #blocked2>> -> tensor<1x16xf32, #blocked2>
  // CHECK: tessel.broadcast
  %b = tessel.broadcast %e : tensor<1x16xf32, #blocked2> -> tensor<32x16xf32, #blocked2>
  return
}

// CHECK-LABEL: func.func @lds_buffers
func.func @lds_buffers(%t: tensor<64x32xf16>, %slot: i32) -> tensor<64x32xf16> {
  // CHECK: %[[B:.*]] = tessel.local_alloc : <2x64x32xf16, order [1, 0], pad 8>
  %b = tessel.local_alloc : !tessel.lds<2x64x32xf16, order [1, 0], pad 8>
  // CHECK: tessel.local_store %{{.*}}, %[[B]][%{{.*}}] : tensor<64x32xf16> -> <2x64x32xf16, order [1, 0], pad 8>
  tessel.local_store %t, %b[%slot] : tensor<64x32xf16> -> !tessel.lds<2x64x32xf16, order [1, 0], pad 8>
  // CHECK: tessel.barrier
  tessel.barrier
  // CHECK: tessel.local_load %[[B]][%{{.*}}] : <2x64x32xf16, order [1, 0], pad 8> -> tensor<64x32xf16>
  %r = tessel.local_load %b[%slot] : !tessel.lds<2x64x32xf16, order [1, 0], pad 8> -> tensor<64x32xf16>
  return %r : tensor<64x32xf16>
}

// CHECK-LABEL: func.func @lds_swizzled
// CHECK-SAME: !tessel.lds<1x64x32xf16, order [1, 0], pad 0, swizzle [8, 2, 4]>
func.func @lds_swizzled(%b: !tessel.lds<1x64x32xf16, order [1, 0], pad 0, swizzle [8, 2, 4]>) {
  return
}

// CHECK-LABEL: func.func @atomics
func.func @atomics(%p: tensor<64x!tessel.ptr<f32>>, %v: tensor<64xf32>, %m: tensor<64xi1>,
                   %q: !tessel.ptr<i32>, %c: i32, %n: i32) -> (tensor<64xf32>, i32) {
  // CHECK: tessel.atomic_rmw add acq_rel agent %{{.*}}, %{{.*}}, %{{.*}} : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>, tensor<64xi1>) -> tensor<64xf32>
  %old = tessel.atomic_rmw add acq_rel agent %p, %v, %m : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>, tensor<64xi1>) -> tensor<64xf32>
  // CHECK: tessel.atomic_rmw xor relaxed wavefront
  %x = tessel.atomic_rmw xor relaxed wavefront %q, %c : (!tessel.ptr<i32>, i32) -> i32
  // CHECK: tessel.atomic_cas acquire system %{{.*}}, %{{.*}}, %{{.*}} : (!tessel.ptr<i32>, i32, i32) -> i32
  %y = tessel.atomic_cas acquire system %q, %c, %n : (!tessel.ptr<i32>, i32, i32) -> i32
  return %old, %y : tensor<64xf32>, i32
}
