// A stable tessel.sort breaks ties by each element's position along the
// axis. Where one of its operands holds those positions already (argsort's
// payload: make_range from 0, on a 2-D tile expanded and broadcast across
// the other axis), markSortPositions marks it and the network
// compares it; otherwise the positions ride along as a hidden operand. The
// network's loops (512 keys: looped) carry what moves, so their block
// arguments say which: the stage counter, then each operand's registers.
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

// -----

// 2-D, along the last axis: arange(0, 512) expanded and broadcast down the
// 2 rows holds each element's position along the axis in every row (as
// argsort and topk make it), here through a layout conversion too: no
// hidden positions. 4 registers a thread per operand.
// CHECK-LABEL: llvm.func @rows_broadcast_positions(
// CHECK: llvm.br ^[[OUTER:bb[0-9]+]]({{.*}} : i32, f32, f32, f32, f32, i32, i32, i32, i32)
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [1, 2], threadsPerWave = [1, 64], wavesPerBlock = [1, 4], order = [1, 0]>
#o = #tessel.blocked<sizePerThread = [2, 2], threadsPerWave = [1, 64], wavesPerBlock = [1, 4], order = [0, 1]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 4224 : i64} {
  func.func @rows_broadcast_positions(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #tessel.slice<dim = 0, parent = #o>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<512xi32, #tessel.slice<dim = 0, parent = #o>> -> tensor<1x512xi32, #o>
    %co = tessel.broadcast %e : tensor<1x512xi32, #o> -> tensor<2x512xi32, #o>
    %c = tessel.convert_layout %co {tessel.lds_offset = 0 : i64} : tensor<2x512xi32, #o> -> tensor<2x512xi32, #b>
    %rr = tessel.make_range {start = 0 : i32, end = 2 : i32} : tensor<2xi32, #tessel.slice<dim = 1, parent = #b>>
    %re = tessel.expand_dims %rr {axis = 1 : i32} : tensor<2xi32, #tessel.slice<dim = 1, parent = #b>> -> tensor<2x1xi32, #b>
    %rb = tessel.broadcast %re : tensor<2x1xi32, #b> -> tensor<2x512xi32, #b>
    %n = arith.constant dense<512> : tensor<2x512xi32, #b>
    %ro = arith.muli %rb, %n : tensor<2x512xi32, #b>
    %off = arith.addi %ro, %c : tensor<2x512xi32, #b>
    %ps = tessel.splat %p : tensor<2x512x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %off : tensor<2x512x!tessel.ptr<f32>, #b>, tensor<2x512xi32, #b>
    %x = tessel.load %pp : (tensor<2x512x!tessel.ptr<f32>, #b>) -> tensor<2x512xf32, #b>
    %k, %i = tessel.sort %x, %c {axis = 1 : i32, descending = false, stable = true, tessel.lds_offset = 0 : i64} : (tensor<2x512xf32, #b>, tensor<2x512xi32, #b>) -> (tensor<2x512xf32, #b>, tensor<2x512xi32, #b>)
    %qs = tessel.splat %q : tensor<2x512x!tessel.ptr<i32>, #b>
    %qq = tessel.addptr %qs, %off : tensor<2x512x!tessel.ptr<i32>, #b>, tensor<2x512xi32, #b>
    tessel.store %pp, %k : (tensor<2x512x!tessel.ptr<f32>, #b>, tensor<2x512xf32, #b>) -> ()
    tessel.store %qq, %i : (tensor<2x512x!tessel.ptr<i32>, #b>, tensor<2x512xi32, #b>) -> ()
    return
  }
}

// -----

// A range of one element (0) broadcast along the sorted axis is 0 at every
// element, not its position: the broadcast may not grow the sorted axis, so
// the positions still ride along.
// CHECK-LABEL: llvm.func @range_broadcast_along_axis(
// CHECK: llvm.br ^[[OUTER:bb[0-9]+]]({{.*}} : i32, f32, f32, f32, f32, i32, i32, i32, i32, i32, i32, i32, i32)
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [1, 2], threadsPerWave = [1, 64], wavesPerBlock = [1, 4], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 4224 : i64} {
  func.func @range_broadcast_along_axis(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #tessel.slice<dim = 0, parent = #b>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<512xi32, #tessel.slice<dim = 0, parent = #b>> -> tensor<1x512xi32, #b>
    %c = tessel.broadcast %e : tensor<1x512xi32, #b> -> tensor<2x512xi32, #b>
    %one = tessel.make_range {start = 0 : i32, end = 1 : i32} : tensor<1xi32, #tessel.slice<dim = 0, parent = #b>>
    %e1 = tessel.expand_dims %one {axis = 0 : i32} : tensor<1xi32, #tessel.slice<dim = 0, parent = #b>> -> tensor<1x1xi32, #b>
    %zeros = tessel.broadcast %e1 : tensor<1x1xi32, #b> -> tensor<2x512xi32, #b>
    %ps = tessel.splat %p : tensor<2x512x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %c : tensor<2x512x!tessel.ptr<f32>, #b>, tensor<2x512xi32, #b>
    %x = tessel.load %pp : (tensor<2x512x!tessel.ptr<f32>, #b>) -> tensor<2x512xf32, #b>
    %k, %i = tessel.sort %x, %zeros {axis = 1 : i32, descending = false, stable = true, tessel.lds_offset = 0 : i64} : (tensor<2x512xf32, #b>, tensor<2x512xi32, #b>) -> (tensor<2x512xf32, #b>, tensor<2x512xi32, #b>)
    %qs = tessel.splat %q : tensor<2x512x!tessel.ptr<i32>, #b>
    %qq = tessel.addptr %qs, %c : tensor<2x512x!tessel.ptr<i32>, #b>, tensor<2x512xi32, #b>
    tessel.store %pp, %k : (tensor<2x512x!tessel.ptr<f32>, #b>, tensor<2x512xf32, #b>) -> ()
    tessel.store %qq, %i : (tensor<2x512x!tessel.ptr<i32>, #b>, tensor<2x512xi32, #b>) -> ()
    return
  }
}

// -----

// The positions along the other axis (each row's index, a range from 0
// broadcast along the sorted axis: equal within a row) break no ties:
// hidden positions.
// CHECK-LABEL: llvm.func @rows_other_axis_positions(
// CHECK: llvm.br ^[[OUTER:bb[0-9]+]]({{.*}} : i32, f32, f32, f32, f32, i32, i32, i32, i32, i32, i32, i32, i32)
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [1, 2], threadsPerWave = [1, 64], wavesPerBlock = [1, 4], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 4224 : i64} {
  func.func @rows_other_axis_positions(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #tessel.slice<dim = 0, parent = #b>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<512xi32, #tessel.slice<dim = 0, parent = #b>> -> tensor<1x512xi32, #b>
    %c = tessel.broadcast %e : tensor<1x512xi32, #b> -> tensor<2x512xi32, #b>
    %rr = tessel.make_range {start = 0 : i32, end = 2 : i32} : tensor<2xi32, #tessel.slice<dim = 1, parent = #b>>
    %re = tessel.expand_dims %rr {axis = 1 : i32} : tensor<2xi32, #tessel.slice<dim = 1, parent = #b>> -> tensor<2x1xi32, #b>
    %rb = tessel.broadcast %re : tensor<2x1xi32, #b> -> tensor<2x512xi32, #b>
    %n = arith.constant dense<512> : tensor<2x512xi32, #b>
    %ro = arith.muli %rb, %n : tensor<2x512xi32, #b>
    %off = arith.addi %ro, %c : tensor<2x512xi32, #b>
    %ps = tessel.splat %p : tensor<2x512x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %off : tensor<2x512x!tessel.ptr<f32>, #b>, tensor<2x512xi32, #b>
    %x = tessel.load %pp : (tensor<2x512x!tessel.ptr<f32>, #b>) -> tensor<2x512xf32, #b>
    %k, %i = tessel.sort %x, %rb {axis = 1 : i32, descending = false, stable = true, tessel.lds_offset = 0 : i64} : (tensor<2x512xf32, #b>, tensor<2x512xi32, #b>) -> (tensor<2x512xf32, #b>, tensor<2x512xi32, #b>)
    %qs = tessel.splat %q : tensor<2x512x!tessel.ptr<i32>, #b>
    %qq = tessel.addptr %qs, %off : tensor<2x512x!tessel.ptr<i32>, #b>, tensor<2x512xi32, #b>
    tessel.store %pp, %k : (tensor<2x512x!tessel.ptr<f32>, #b>, tensor<2x512xf32, #b>) -> ()
    tessel.store %qq, %i : (tensor<2x512x!tessel.ptr<i32>, #b>, tensor<2x512xi32, #b>) -> ()
    return
  }
}

// -----

// 2-D, along the first axis: arange(0, 512) expanded at axis 1 and
// broadcast along it holds each element's row: no hidden positions.
// CHECK-LABEL: llvm.func @columns_broadcast_positions(
// CHECK: llvm.br ^[[OUTER:bb[0-9]+]]({{.*}} : i32, f32, f32, f32, f32, i32, i32, i32, i32)
// CHECK: llvm.return
#t = #tessel.blocked<sizePerThread = [2, 1], threadsPerWave = [64, 1], wavesPerBlock = [4, 1], order = [0, 1]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 4224 : i64} {
  func.func @columns_broadcast_positions(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #tessel.slice<dim = 1, parent = #t>>
    %e = tessel.expand_dims %r {axis = 1 : i32} : tensor<512xi32, #tessel.slice<dim = 1, parent = #t>> -> tensor<512x1xi32, #t>
    %rows = tessel.broadcast %e : tensor<512x1xi32, #t> -> tensor<512x2xi32, #t>
    %two = arith.constant dense<2> : tensor<512x2xi32, #t>
    %off = arith.muli %rows, %two : tensor<512x2xi32, #t>
    %ps = tessel.splat %p : tensor<512x2x!tessel.ptr<f32>, #t>
    %pp = tessel.addptr %ps, %off : tensor<512x2x!tessel.ptr<f32>, #t>, tensor<512x2xi32, #t>
    %x = tessel.load %pp : (tensor<512x2x!tessel.ptr<f32>, #t>) -> tensor<512x2xf32, #t>
    %k, %i = tessel.sort %x, %rows {axis = 0 : i32, descending = true, stable = true, tessel.lds_offset = 0 : i64} : (tensor<512x2xf32, #t>, tensor<512x2xi32, #t>) -> (tensor<512x2xf32, #t>, tensor<512x2xi32, #t>)
    %qs = tessel.splat %q : tensor<512x2x!tessel.ptr<i32>, #t>
    %qq = tessel.addptr %qs, %off : tensor<512x2x!tessel.ptr<i32>, #t>, tensor<512x2xi32, #t>
    tessel.store %pp, %k : (tensor<512x2x!tessel.ptr<f32>, #t>, tensor<512x2xf32, #t>) -> ()
    tessel.store %qq, %i : (tensor<512x2x!tessel.ptr<i32>, #t>, tensor<512x2xi32, #t>) -> ()
    return
  }
}

// -----

// 3-D, along the last axis: the range expanded twice and broadcast across
// both other axes (as topk on [B, 2, 2] makes it). 8 registers a thread.
// CHECK-LABEL: llvm.func @cube_broadcast_positions(
// CHECK: llvm.br ^[[OUTER:bb[0-9]+]]({{.*}} : i32, f32, f32, f32, f32, f32, f32, f32, f32, i32, i32, i32, i32, i32, i32, i32, i32)
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [1, 1, 2], threadsPerWave = [1, 1, 64], wavesPerBlock = [1, 1, 4], order = [2, 1, 0]>
#s1 = #tessel.slice<dim = 0, parent = #b>
#s2 = #tessel.slice<dim = 0, parent = #s1>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 8448 : i64} {
  func.func @cube_broadcast_positions(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #s2>
    %e1 = tessel.expand_dims %r {axis = 0 : i32} : tensor<512xi32, #s2> -> tensor<1x512xi32, #s1>
    %e2 = tessel.expand_dims %e1 {axis = 0 : i32} : tensor<1x512xi32, #s1> -> tensor<1x1x512xi32, #b>
    %c = tessel.broadcast %e2 : tensor<1x1x512xi32, #b> -> tensor<2x2x512xi32, #b>
    %ps = tessel.splat %p : tensor<2x2x512x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %c : tensor<2x2x512x!tessel.ptr<f32>, #b>, tensor<2x2x512xi32, #b>
    %x = tessel.load %pp : (tensor<2x2x512x!tessel.ptr<f32>, #b>) -> tensor<2x2x512xf32, #b>
    %k, %i = tessel.sort %x, %c {axis = 2 : i32, descending = false, stable = true, tessel.lds_offset = 0 : i64} : (tensor<2x2x512xf32, #b>, tensor<2x2x512xi32, #b>) -> (tensor<2x2x512xf32, #b>, tensor<2x2x512xi32, #b>)
    %qs = tessel.splat %q : tensor<2x2x512x!tessel.ptr<i32>, #b>
    %qq = tessel.addptr %qs, %c : tensor<2x2x512x!tessel.ptr<i32>, #b>, tensor<2x2x512xi32, #b>
    tessel.store %qq, %i : (tensor<2x2x512x!tessel.ptr<i32>, #b>, tensor<2x2x512xi32, #b>) -> ()
    return
  }
}
