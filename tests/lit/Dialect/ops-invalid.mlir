// RUN: tessel-opt %s -split-input-file -verify-diagnostics

func.func @range_size(%n: i32) {
  // expected-error@below {{result has 16 elements but the range [0, 32) has 32}}
  %r = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<16xi32>
  return
}

// -----

func.func @broadcast_dim(%x: tensor<4x8xf32>) {
  // expected-error@below {{dimension 0 of size 4 cannot be broadcast to 8}}
  %b = tessel.broadcast %x : tensor<4x8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @expand_shape(%x: tensor<8xf32>) {
  // expected-error@below {{result shape must be the operand's with a 1 inserted at axis 1}}
  %e = tessel.expand_dims %x {axis = 1 : i32} : tensor<8xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @load_type(%p: tensor<8x!tessel.ptr<f32>>) {
  // expected-error@below {{result element type must be the pointee type 'f32'}}
  %v = tessel.load %p : (tensor<8x!tessel.ptr<f32>>) -> tensor<8xf16>
  return
}

// -----

func.func @store_mask_shape(%p: tensor<8x!tessel.ptr<f32>>, %v: tensor<8xf32>, %m: tensor<4xi1>) {
  // expected-error@below {{mask must have the pointer operand's shape}}
  tessel.store %p, %v, %m : (tensor<8x!tessel.ptr<f32>>, tensor<8xf32>, tensor<4xi1>) -> ()
  return
}

// -----

func.func @program_axis() {
  // expected-error@below {{attribute 'axis' failed to satisfy constraint}}
  %p = tessel.program_id 3 : i32
  return
}

// -----

// expected-error@below {{blocked layout sizes must be powers of two}}
func.func @bad_layout(%x: tensor<8xf32, #tessel.blocked<sizePerThread = [3], threadsPerWave = [64], wavesPerBlock = [1], order = [0]>>) {
  return
}

// -----

func.func @lds_slot_shape(%t: tensor<32x32xf16>, %slot: i32) {
  %b = tessel.local_alloc : !tessel.lds<2x64x32xf16, order [1, 0], pad 8>
  // expected-error@below {{tile 'tensor<32x32xf16>' does not match a slot of '!tessel.lds<2x64x32xf16, order [1, 0], pad 8>'}}
  tessel.local_store %t, %b[%slot] : tensor<32x32xf16> -> !tessel.lds<2x64x32xf16, order [1, 0], pad 8>
  return
}

// -----

func.func @lds_load_type(%slot: i32) {
  %b = tessel.local_alloc : !tessel.lds<1x64x32xf16, order [1, 0], pad 8>
  // expected-error@below {{does not match a slot of}}
  %r = tessel.local_load %b[%slot] : !tessel.lds<1x64x32xf16, order [1, 0], pad 8> -> tensor<64x32xf32>
  return
}

// -----

// expected-error@below {{an LDS buffer's order must be a permutation of 0..1}}
func.func @lds_order(%b: !tessel.lds<2x64x32xf16, order [1, 1], pad 8>) {
  return
}

// -----

// expected-error@below {{an LDS buffer's order has one entry per tile dimension (2)}}
func.func @lds_order_rank(%b: !tessel.lds<2x64x32xf16, order [0], pad 8>) {
  return
}

// -----

// expected-error@below {{an LDS buffer's shape is a slot count and a tile shape, all positive}}
func.func @lds_shape(%b: !tessel.lds<2xf16, order [], pad 0>) {
  return
}

// -----

// expected-error@below {{an LDS buffer's swizzle is [unit, perPhase, maxPhase], powers of two}}
func.func @lds_swizzle_params(%b: !tessel.lds<1x64x32xf16, order [1, 0], pad 0, swizzle [8, 3, 4]>) {
  return
}

// -----

// expected-error@below {{an LDS buffer's swizzle permutes chunks within a row: unit * maxPhase (64) must fit in a row of 32}}
func.func @lds_swizzle_row(%b: !tessel.lds<1x64x32xf16, order [1, 0], pad 0, swizzle [8, 1, 8]>) {
  return
}

// -----

func.func @atomic_and_float(%p: tensor<64x!tessel.ptr<f32>>, %v: tensor<64xf32>) {
  // expected-error@below {{atomic and takes i32 or i64 elements, not 'f32'}}
  %old = tessel.atomic_rmw and relaxed agent %p, %v : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>) -> tensor<64xf32>
  return
}

// -----

func.func @atomic_i8(%p: tensor<64x!tessel.ptr<i8>>, %v: tensor<64xi8>) {
  // expected-error@below {{atomic add takes f16, bf16, f32, i32 or i64 elements, not 'i8'}}
  %old = tessel.atomic_rmw add relaxed agent %p, %v : (tensor<64x!tessel.ptr<i8>>, tensor<64xi8>) -> tensor<64xi8>
  return
}

// -----

func.func @atomic_cas_types(%p: !tessel.ptr<i32>, %c: i64, %v: i32) {
  // expected-error@below {{compared value element type must be the pointee type 'i32'}}
  %old = tessel.atomic_cas relaxed agent %p, %c, %v : (!tessel.ptr<i32>, i64, i32) -> i32
  return
}

// -----

func.func @atomic_mask_shape(%p: tensor<64x!tessel.ptr<i32>>, %v: tensor<64xi32>, %m: tensor<32xi1>) {
  // expected-error@below {{mask must have the pointer operand's shape}}
  %old = tessel.atomic_rmw add relaxed agent %p, %v, %m : (tensor<64x!tessel.ptr<i32>>, tensor<64xi32>, tensor<32xi1>) -> tensor<64xi32>
  return
}

// -----

func.func @sort_axis(%k: tensor<64xf32>) {
  // expected-error@below {{axis 1 is out of range for a rank-1 tile}}
  %s = tessel.sort %k {axis = 1 : i32, descending = false, stable = false} : (tensor<64xf32>) -> tensor<64xf32>
  return
}

// -----

func.func @sort_bool_keys(%k: tensor<64xi1>) {
  // expected-error@below {{sorts integer or float keys, not 'i1'}}
  %s = tessel.sort %k {axis = 0 : i32, descending = false, stable = false} : (tensor<64xi1>) -> tensor<64xi1>
  return
}

// -----

func.func @sort_payload_shape(%k: tensor<64xf32>, %p: tensor<32xi32>) {
  // expected-error@below {{operands must have one shape and layout}}
  %s:2 = tessel.sort %k, %p {axis = 0 : i32, descending = false, stable = false} : (tensor<64xf32>, tensor<32xi32>) -> (tensor<64xf32>, tensor<32xi32>)
  return
}

// -----

func.func @gather_extent(%x: tensor<8x64xf32>, %i: tensor<4x16xi32>) {
  // expected-error@below {{indices must match the source's extent along every dim but the axis (dim 0)}}
  %g = tessel.gather %x[%i] {axis = 1 : i32} : tensor<8x64xf32>, tensor<4x16xi32> -> tensor<4x16xf32>
  return
}

// -----

func.func @gather_index_type(%x: tensor<8x64xf32>, %i: tensor<8x16xf32>) {
  // expected-error@below {{indices are i32 or i64}}
  %g = tessel.gather %x[%i] {axis = 1 : i32} : tensor<8x64xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @histogram_floats(%x: tensor<64xf32>) {
  // expected-error@below {{counts i32 or i64 values, not 'f32'}}
  %h = tessel.histogram %x : (tensor<64xf32>) -> tensor<16xi32>
  return
}

// -----

func.func @sort_mask_type(%k: tensor<64xf32>, %m: tensor<64xi32>) {
  // expected-error@below {{a masked sort's last operand is the i1 mask}}
  %s:2 = tessel.sort %k, %m {axis = 0 : i32, descending = false, stable = false, masked = true} : (tensor<64xf32>, tensor<64xi32>) -> (tensor<64xf32>, tensor<64xi32>)
  return
}

// -----

func.func @buffer_load_type(%x: !tessel.ptr<f32>, %o: tensor<64xi32>) {
  // expected-error@below {{result element type must be the pointee type 'f32'}}
  %a = tessel.buffer_load %x[%o] : (!tessel.ptr<f32>, tensor<64xi32>) -> tensor<64xf16>
  return
}

// -----

func.func @buffer_load_mask_shape(%x: !tessel.ptr<f32>, %o: tensor<64xi32>, %m: tensor<32xi1>) {
  // expected-error@below {{mask}}
  %a = tessel.buffer_load %x[%o], %m : (!tessel.ptr<f32>, tensor<64xi32>, tensor<32xi1>) -> tensor<64xf32>
  return
}

// -----

func.func @buffer_store_shape(%x: !tessel.ptr<f32>, %o: tensor<64xi32>, %v: tensor<32xf32>) {
  // expected-error@below {{value}}
  tessel.buffer_store %x[%o], %v : (!tessel.ptr<f32>, tensor<64xi32>, tensor<32xf32>) -> ()
  return
}

// -----

func.func @dot_fp8_families(%a: tensor<32x32xf8E4M3FN>, %b: tensor<32x32xf8E5M2FNUZ>, %c: tensor<32x32xf32>) {
  // expected-error@below {{a and b must have one element type, or be 8-bit floats of one family (OCP or FNUZ)}}
  %d = tessel.dot %a, %b, %c : tensor<32x32xf8E4M3FN> * tensor<32x32xf8E5M2FNUZ> -> tensor<32x32xf32>
  return
}

// -----

func.func @load_to_lds_type(%p: !tessel.ptr<f32>, %o: tensor<64x32xi32>, %slot: i32) {
  %b = tessel.local_alloc : !tessel.lds<2x64x32xf16, order [1, 0], pad 0>
  // expected-error@below {{buffer element type must be the pointee type 'f32'}}
  tessel.buffer_load_to_local %p[%o] into %b[%slot] {vec = 8 : i32} : (!tessel.ptr<f32>, tensor<64x32xi32>, !tessel.lds<2x64x32xf16, order [1, 0], pad 0>, i32) -> ()
  return
}

// -----

func.func @dot_fp8_with_f16(%a: tensor<32x32xf8E4M3FNUZ>, %b: tensor<32x32xf16>, %c: tensor<32x32xf32>) {
  // expected-error@below {{a and b must have one element type}}
  %d = tessel.dot %a, %b, %c : tensor<32x32xf8E4M3FNUZ> * tensor<32x32xf16> -> tensor<32x32xf32>
  return
}

// -----

func.func @dot_fp8_accumulator(%a: tensor<32x32xf8E5M2>, %b: tensor<32x32xf8E4M3FN>, %c: tensor<32x32xf16>) {
  // expected-error@below {{takes f16, bf16, f32 or 8-bit float operands with an f32 accumulator, or i8 with i32}}
  %d = tessel.dot %a, %b, %c : tensor<32x32xf8E5M2> * tensor<32x32xf8E4M3FN> -> tensor<32x32xf16>
  return
}

// -----

func.func @load_to_lds_shape(%p: !tessel.ptr<f16>, %o: tensor<32x32xi32>, %slot: i32) {
  %b = tessel.local_alloc : !tessel.lds<2x64x32xf16, order [1, 0], pad 0>
  // expected-error@below {{offsets 'tensor<32x32xi32>' do not match a slot of '!tessel.lds<2x64x32xf16, order [1, 0], pad 0>'}}
  tessel.buffer_load_to_local %p[%o] into %b[%slot] {vec = 8 : i32} : (!tessel.ptr<f16>, tensor<32x32xi32>, !tessel.lds<2x64x32xf16, order [1, 0], pad 0>, i32) -> ()
  return
}

// -----

func.func @dot_one_scale(%a: tensor<32x64xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %c: tensor<32x32xf32>,
                         %s: tensor<32x2xi8>) -> tensor<32x32xf32> {
  // expected-error@below {{takes both scales or neither}}
  %d = "tessel.dot"(%a, %b, %c, %s) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}
       : (tensor<32x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>, tensor<32x32xf32>, tensor<32x2xi8>) -> tensor<32x32xf32>
  return %d : tensor<32x32xf32>
}

// -----

func.func @dot_scales_f16(%a: tensor<32x64xf16>, %b: tensor<64x32xf16>, %c: tensor<32x32xf32>, %sa: tensor<32x2xi8>,
                          %sb: tensor<32x2xi8>) -> tensor<32x32xf32> {
  // expected-error@below {{scales 2-D OCP 8-bit float or e2m1 operands whose K is a multiple of 32}}
  %d = tessel.dot %a, %b, %c scales %sa, %sb : tensor<32x2xi8>, tensor<32x2xi8> : tensor<32x64xf16> * tensor<64x32xf16> -> tensor<32x32xf32>
  return %d : tensor<32x32xf32>
}

// -----

func.func @dot_scales_shape(%a: tensor<32x64xf8E4M3FN>, %b: tensor<64x32xf8E5M2>, %c: tensor<32x32xf32>,
                            %sa: tensor<32x2xi8>, %sb: tensor<2x32xi8>) -> tensor<32x32xf32> {
  // expected-error@below {{scales are i8 [M, K / 32] and [N, K / 32] = [32, 2] and [32, 2]}}
  %d = tessel.dot %a, %b, %c scales %sa, %sb : tensor<32x2xi8>, tensor<2x32xi8> : tensor<32x64xf8E4M3FN> * tensor<64x32xf8E5M2> -> tensor<32x32xf32>
  return %d : tensor<32x32xf32>
}

// -----

func.func @dot_e2m1_i32(%a: tensor<32x32xi8>, %b: tensor<64x32xi8>, %c: tensor<32x32xi32>) -> tensor<32x32xi32> {
  // expected-error@below {{takes e2m1 operands as 2-D i8 bytes beside e2m1 or OCP 8-bit float ones, with an f32 accumulator}}
  %d = tessel.dot %a, %b, %c {a_e2m1} : tensor<32x32xi8> * tensor<64x32xi8> -> tensor<32x32xi32>
  return %d : tensor<32x32xi32>
}

// -----

func.func @dot_e2m1_f16(%a: tensor<32x32xi8>, %b: tensor<64x32xf16>, %c: tensor<32x32xf32>, %sa: tensor<32x2xi8>,
                        %sb: tensor<32x2xi8>) -> tensor<32x32xf32> {
  // expected-error@below {{takes e2m1 operands as 2-D i8 bytes beside e2m1 or OCP 8-bit float ones, with an f32 accumulator}}
  %d = tessel.dot %a, %b, %c scales %sa, %sb : tensor<32x2xi8>, tensor<32x2xi8> {a_e2m1} : tensor<32x32xi8> * tensor<64x32xf16> -> tensor<32x32xf32>
  return %d : tensor<32x32xf32>
}

// -----

func.func @dot_e2m1_k(%a: tensor<32x64xi8>, %b: tensor<64x32xi8>, %c: tensor<32x32xf32>, %sa: tensor<32x2xi8>,
                      %sb: tensor<32x2xi8>) -> tensor<32x32xf32> {
  // expected-error@below {{K differs: a's is 128, b's 64}}
  %d = tessel.dot %a, %b, %c scales %sa, %sb : tensor<32x2xi8>, tensor<32x2xi8> {a_e2m1} : tensor<32x64xi8> * tensor<64x32xi8> -> tensor<32x32xf32>
  return %d : tensor<32x32xf32>
}

// -----

func.func @dot_scaled_k(%a: tensor<32x48xf8E4M3FN>, %b: tensor<48x32xf8E4M3FN>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  // expected-error@below {{a and b must hold one K, a multiple of 32}}
  %d = tessel.dot_scaled %a, %b, %c fallback %c {a_format = 1 : i32, b_format = 1 : i32}
       : tensor<32x48xf8E4M3FN> * tensor<48x32xf8E4M3FN> -> tensor<32x32xf32>
  return %d : tensor<32x32xf32>
}

// -----

func.func @dot_scaled_scale_shape(%a: tensor<32x64xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %c: tensor<32x32xf32>,
                                  %sb: tensor<2x32xi8>) -> tensor<32x32xf32> {
  // expected-error@below {{scales are i8 [M, K / 32] and [N, K / 32]}}
  %d = tessel.dot_scaled %a, %b, %c fallback %c b_scale %sb : tensor<2x32xi8> {a_format = 1 : i32, b_format = 1 : i32}
       : tensor<32x64xf8E4M3FN> * tensor<64x32xf8E4M3FN> -> tensor<32x32xf32>
  return %d : tensor<32x32xf32>
}
