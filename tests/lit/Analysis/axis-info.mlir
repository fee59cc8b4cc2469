// RUN: tessel-opt %s --tessel-test-axis-info -verify-diagnostics

func.func @vector_add_offsets(%p: !tessel.ptr<f32> {tessel.divisibility = 16 : i32},
                              %n: i32 {tessel.divisibility = 16 : i32}, %m: i32) {
  %pid = tessel.program_id 0 : i32
  %c = arith.constant 256 : i32
  %base = arith.muli %pid, %c : i32
  // expected-remark@below {{contiguity = [256], divisibility = [1073741824], constancy = [1]}}
  %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [256], constancy = [256]}}
  %bs = tessel.splat %base : tensor<256xi32>
  // expected-remark@below {{contiguity = [256], divisibility = [256], constancy = [1]}}
  %offs = arith.addi %bs, %r : tensor<256xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [16], constancy = [256]}}
  %ns = tessel.splat %n : tensor<256xi32>
  // A contiguous run compared with a multiple of 16 flips only at multiples of 16.
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [16]}}
  %mask = arith.cmpi slt, %offs, %ns : tensor<256xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [256]}}
  %ms = tessel.splat %m : tensor<256xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %mask2 = arith.cmpi slt, %offs, %ms : tensor<256xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [16], constancy = [256]}}
  %ps = tessel.splat %p : tensor<256x!tessel.ptr<f32>>
  // Byte divisibility: gcd(16, 256 * 4).
  // expected-remark@below {{contiguity = [256], divisibility = [16], constancy = [1]}}
  %pp = tessel.addptr %ps, %offs : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
  // 2-D: rows are a multiple of 64 elements apart, columns contiguous.
  // expected-remark@below {{contiguity = [1, 1], divisibility = [64, 64], constancy = [16, 1]}}
  %c64 = arith.constant dense<64> : tensor<16x1xi32>
  // expected-remark@below {{contiguity = [16], divisibility = [1073741824], constancy = [1]}}
  %rows = tessel.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  // expected-remark@below {{contiguity = [16, 1], divisibility = [1073741824, 1], constancy = [1, 1]}}
  %rows2 = tessel.expand_dims %rows {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  // expected-remark@below {{contiguity = [1, 1], divisibility = [64, 64], constancy = [1, 1]}}
  %rowoff = arith.muli %rows2, %c64 : tensor<16x1xi32>
  // expected-remark@below {{contiguity = [1, 1], divisibility = [64, 64], constancy = [1, 32]}}
  %rowb = tessel.broadcast %rowoff : tensor<16x1xi32> -> tensor<16x32xi32>
  // expected-remark@below {{contiguity = [32], divisibility = [1073741824], constancy = [1]}}
  %cols = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  // expected-remark@below {{contiguity = [1, 32], divisibility = [1, 1073741824], constancy = [1, 1]}}
  %cols2 = tessel.expand_dims %cols {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  // expected-remark@below {{contiguity = [1, 32], divisibility = [1, 1073741824], constancy = [16, 1]}}
  %colb = tessel.broadcast %cols2 : tensor<1x32xi32> -> tensor<16x32xi32>
  // Each row is a contiguous run of 32 starting at a multiple of 64.
  // expected-remark@below {{contiguity = [1, 32], divisibility = [1, 64], constancy = [1, 1]}}
  %idx = arith.addi %rowb, %colb : tensor<16x32xi32>
  return
}

// Only elementwise ops pass constancy through: a scan of constants is not
// constant, a permute moves each dimension's facts with it.
func.func @not_elementwise(%x: tensor<16x32xi32>) {
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [64]}}
  %ones = arith.constant dense<1> : tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %cs = tessel.scan %ones {axis = 0 : i32} : (tensor<64xi32>) -> tensor<64xi32> {
  ^bb0(%a: i32, %b: i32):
    %c = arith.addi %a, %b : i32
    tessel.yield %c : i32
  }
  // expected-remark@below {{contiguity = [32], divisibility = [1073741824], constancy = [1]}}
  %cols = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  // expected-remark@below {{contiguity = [1, 32], divisibility = [1, 1073741824], constancy = [1, 1]}}
  %row = tessel.expand_dims %cols {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  // expected-remark@below {{contiguity = [1, 32], divisibility = [1, 1073741824], constancy = [16, 1]}}
  %b = tessel.broadcast %row : tensor<1x32xi32> -> tensor<16x32xi32>
  // expected-remark@below {{contiguity = [32, 1], divisibility = [1073741824, 1], constancy = [1, 16]}}
  %t = tessel.permute %b {order = array<i32: 1, 0>} : tensor<16x32xi32> -> tensor<32x16xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %r = tessel.reshape %b : tensor<16x32xi32> -> tensor<512xi32>
  return
}

// Division and remainder by a constant: pieces of gcd(contiguity,
// divisibility, C) elements keep / constant and % contiguous. Signed
// division needs a dividend known >= 0 (program ids, aranges, + and *).
func.func @div_rem_by_constant(%k: i32) {
  %pid = tessel.program_id 0 : i32
  %c2048 = arith.constant 2048 : i32
  %base = arith.muli %pid, %c2048 : i32
  // expected-remark@below {{contiguity = [1], divisibility = [2048], constancy = [2048], non-negative}}
  %bs = tessel.splat %base : tensor<2048xi32>
  // expected-remark@below {{contiguity = [2048], divisibility = [1073741824], constancy = [1], non-negative}}
  %r = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
  // expected-remark@below {{contiguity = [2048], divisibility = [2048], constancy = [1], non-negative}}
  %i = arith.addi %bs, %r : tensor<2048xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [2048], constancy = [2048], non-negative}}
  %c = arith.constant dense<14336> : tensor<2048xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [2048], non-negative}}
  %q = arith.divsi %i, %c : tensor<2048xi32>
  // expected-remark@below {{contiguity = [2048], divisibility = [2048], constancy = [1], non-negative}}
  %m = arith.remsi %i, %c : tensor<2048xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [2048], constancy = [2048], non-negative}}
  %qc = arith.muli %q, %c : tensor<2048xi32>
  // expected-remark@below {{contiguity = [2048], divisibility = [2048], constancy = [1], non-negative}}
  %back = arith.addi %qc, %m : tensor<2048xi32>
  // An odd divisor splits runs into single elements.
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [2048], non-negative}}
  %c7 = arith.constant dense<7> : tensor<2048xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [1], non-negative}}
  %q7 = arith.divsi %i, %c7 : tensor<2048xi32>
  // Of unknown sign (a kernel argument added): signed division learns nothing.
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [2048]}}
  %ks = tessel.splat %k : tensor<2048xi32>
  // expected-remark@below {{contiguity = [2048], divisibility = [1], constancy = [1]}}
  %j = arith.addi %ks, %r : tensor<2048xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [16], constancy = [2048], non-negative}}
  %c16 = arith.constant dense<16> : tensor<2048xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [16], non-negative}}
  %iq = arith.divsi %i, %c16 : tensor<2048xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %jq2 = arith.divsi %j, %c16 : tensor<2048xi32>
  // Unsigned division needs no sign: runs of x starting at multiples of 16.
  // expected-remark@below {{contiguity = [1], divisibility = [16], constancy = [2048]}}
  %k16 = tessel.multiple_of %ks {divisor = 16} : tensor<2048xi32>
  // expected-remark@below {{contiguity = [2048], divisibility = [16], constancy = [1]}}
  %j16 = arith.addi %k16, %r : tensor<2048xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [16]}}
  %ju = arith.divui %j16, %c16 : tensor<2048xi32>
  // expected-remark@below {{contiguity = [16], divisibility = [16], constancy = [1]}}
  %jr = arith.remui %j16, %c16 : tensor<2048xi32>
  return
}

// select, max and min: each element is one of two operands' elements. A
// choice between values divisible by 16 and 0 stays divisible by 16; a
// select on a uniform condition keeps the runs both operands have; max/min
// have runs of 1, so an operand's divisibility (its runs' first elements')
// no longer holds: min(arange, 1000)[1] = 1.
func.func @choices(%n: i32 {tessel.divisibility = 16 : i32}, %c: i1) {
  // expected-remark@below {{contiguity = [1], divisibility = [16], constancy = [64]}}
  %ns = tessel.splat %n : tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1073741824], constancy = [64], non-negative}}
  %zero = arith.constant dense<0> : tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [16], constancy = [64], non-negative}}
  %pos = arith.maxsi %ns, %zero : tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [64]}}
  %cs = tessel.splat %c : tensor<64xi1>
  // expected-remark@below {{contiguity = [1], divisibility = [16], constancy = [64]}}
  %b = arith.select %cs, %ns, %zero : tensor<64xi1>, tensor<64xi32>
  // expected-remark@below {{contiguity = [64], divisibility = [1073741824], constancy = [1], non-negative}}
  %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [8], constancy = [64], non-negative}}
  %k = arith.constant dense<1000> : tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [1], non-negative}}
  %m = arith.minsi %r, %k : tensor<64xi32>
  // expected-remark@below {{contiguity = [64], divisibility = [1073741824], constancy = [1], non-negative}}
  %r2 = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark@below {{contiguity = [64], divisibility = [1073741824], constancy = [1], non-negative}}
  %sel = arith.select %cs, %r, %r2 : tensor<64xi1>, tensor<64xi32>
  return
}

// x % N and x / N for an N known only at run time but the same for every
// element (a splatted argument): the power of two dividing N plays the
// constant's part, so Triton's `(pid_n * 128 + arange(0, 128)) % N` keeps
// runs of 16 when N % 16 == 0. Signed ones still need x >= 0, which an
// assume() can state of any scalar (Triton's tutorial: assume(pid_n >= 0)).
func.func @div_rem_by_runtime_value(%n: i32 {tessel.divisibility = 16 : i32}, %m: i32, %g: i32) {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %pid = tessel.program_id 0 : i32
  %q = arith.divsi %pid, %g : i32
  %ok = arith.cmpi sge, %q, %c0 : i32
  tessel.assume %ok
  %base = arith.muli %q, %c128 : i32
  // expected-remark@below {{contiguity = [1], divisibility = [128], constancy = [128], non-negative}}
  %bs = tessel.splat %base : tensor<128xi32>
  // expected-remark@below {{contiguity = [128], divisibility = [1073741824], constancy = [1], non-negative}}
  %r = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  // expected-remark@below {{contiguity = [128], divisibility = [128], constancy = [1], non-negative}}
  %x = arith.addi %bs, %r : tensor<128xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [16], constancy = [128]}}
  %ns = tessel.splat %n : tensor<128xi32>
  // expected-remark@below {{contiguity = [16], divisibility = [16], constancy = [1], non-negative}}
  %rem = arith.remsi %x, %ns : tensor<128xi32>
  // The quotient's sign is N's, unknown here.
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [16]}}
  %quo = arith.divsi %x, %ns : tensor<128xi32>
  // An N with no known power of two: runs of one.
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [128]}}
  %ms = tessel.splat %m : tensor<128xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [1], non-negative}}
  %rem_m = arith.remsi %x, %ms : tensor<128xi32>
  // A divisor that differs between elements: nothing.
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %rem_r = arith.remsi %x, %r : tensor<128xi32>
  // Without the assumption x may be negative: a signed % learns nothing, an
  // unsigned one needs no sign.
  %q2 = arith.divsi %pid, %g : i32
  %base2 = arith.muli %q2, %c128 : i32
  // expected-remark@below {{contiguity = [1], divisibility = [128], constancy = [128]}}
  %bs2 = tessel.splat %base2 : tensor<128xi32>
  // expected-remark@below {{contiguity = [128], divisibility = [128], constancy = [1]}}
  %x2 = arith.addi %bs2, %r : tensor<128xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %rem2 = arith.remsi %x2, %ns : tensor<128xi32>
  // expected-remark@below {{contiguity = [16], divisibility = [16], constancy = [1]}}
  %rem2u = arith.remui %x2, %ns : tensor<128xi32>
  return
}
