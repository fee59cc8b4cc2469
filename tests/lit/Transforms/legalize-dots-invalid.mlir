// RUN: tessel-opt %s -split-input-file --tessel-legalize-dots -verify-diagnostics

module attributes {tessel.target = "gfx942"} {
  func.func @ocp_on_gfx942(%a: tensor<32x32xf8E4M3FN>, %b: tensor<32x32xf8E5M2>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
    // expected-error@below {{dot on float8_e4m3fn and float8_e5m2: gfx942's matrix cores take the FNUZ 8-bit floats (float8_e4m3fnuz, float8_e5m2fnuz), not the OCP ones; use float8_e4m3fnuz and float8_e5m2fnuz (cast<T>(...) the operands; a byte means another value in the other format), or compile for gfx950 (float8_e4m3fn, float8_e5m2)}}
    %d = tessel.dot %a, %b, %c : tensor<32x32xf8E4M3FN> * tensor<32x32xf8E5M2> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

module attributes {tessel.target = "gfx950"} {
  func.func @fnuz_on_gfx950(%a: tensor<32x32xf8E5M2FNUZ>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
    // expected-error@below {{dot on float8_e5m2fnuz: gfx950's matrix cores take the OCP 8-bit floats (float8_e4m3fn, float8_e5m2), not the FNUZ ones; use float8_e5m2 (cast<T>(...) the operands; a byte means another value in the other format), or compile for gfx942 (float8_e4m3fnuz, float8_e5m2fnuz)}}
    %d = tessel.dot %a, %a, %c : tensor<32x32xf8E5M2FNUZ> * tensor<32x32xf8E5M2FNUZ> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

module attributes {tessel.target = "gfx90a"} {
  func.func @none_on_gfx90a(%a: tensor<32x32xf8E4M3FNUZ>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
    // expected-error@below {{dot on float8_e4m3fnuz: gfx90a's matrix cores take no 8-bit floats; cast<half>(...) the operands (exact) and dot those, or compile for gfx942 (float8_e4m3fnuz, float8_e5m2fnuz) or gfx950 (float8_e4m3fn, float8_e5m2)}}
    %d = tessel.dot %a, %a, %c : tensor<32x32xf8E4M3FNUZ> * tensor<32x32xf8E4M3FNUZ> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}
