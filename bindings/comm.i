/*
 * comm.i - the one SWIG description of comm.h, shared by every binding.
 *
 * It is %include'd, not compiled on its own: each language has a top-level
 * interface (bindings/python/comm_swig.i, later bindings/java/..., bindings/go/...)
 * that declares its %module, includes its own typemaps first, then this file.
 * Keep this file free of language-specific code so the three bindings see the
 * same functions, enums and constants.
 */

%{
#include "comm.h"
%}

%include <stdint.i>

/* comm.h defines COMM_API as nothing when SWIG parses it. SWIG does not
   follow #include, so the version macros comm.h includes come first. */
%include "comm_version.h"
%include "comm.h"
