/* Compiled as strict C99 and (header_test.cc) as C++: comm.h must stand alone. */
#include "comm.h"

int main(void) { return comm_version() == COMM_VERSION_NUMBER ? 0 : 1; }
