// The consumer's tessel-compile: vector_add registered for ahead-of-time
// compilation; tessel::compile_main gives this program its main().
#include "vector_add.hpp"

#include <tessel/aot.hpp>

TESSEL_AOT_KERNEL(vector_add, "x", "y", "out", "n", "BLOCK");
