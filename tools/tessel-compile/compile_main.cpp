// main() of a tessel-compile: a program that registers kernels with
// TESSEL_AOT_KERNEL and links tessel_compile_main gets this as its main.
#include "aot_driver.hpp"

int main(int argc, char **argv) { return tessel::aot::compileMain(argc, argv); }
