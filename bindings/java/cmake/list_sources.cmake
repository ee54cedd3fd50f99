# cmake -DDIR=<folder> -DOUT=<file> -P list_sources.cmake: write the .java
# files SWIG generated in DIR to OUT, one per line, for javac @OUT.
file(GLOB sources "${DIR}/*.java")
list(JOIN sources "\n" lines)
file(WRITE "${OUT}" "${lines}\n")
