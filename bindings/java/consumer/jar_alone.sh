#!/bin/sh
# comm.jar alone: copied into an empty folder, which is the working
# directory and the only classpath entry, with no java.library.path,
# LD_LIBRARY_PATH or build tree to find libraries in; JarAlone.java (run by
# java's source launcher, so no class folder either) all-reduces on 2 ranks
# and checks that the natives it runs were extracted from the jar.
#   jar_alone.sh JAR WORK_DIR JAVA COMMRUN
set -eu
jar=$1 work=$2 java=$3 commrun=$4
here=$(cd "$(dirname "$0")" && pwd)
unset LD_LIBRARY_PATH CLASSPATH JAVA_TOOL_OPTIONS
rm -rf "$work"
mkdir -p "$work/lib" "$work/tmp"
cp "$jar" "$work/lib/comm.jar"
cd "$work/lib"
listing=$(ls -A)
[ "$listing" = comm.jar ] || { echo "FAILED: the folder holds more than comm.jar: $listing"; exit 1; }
"$commrun" -n 2 --timeout 300 "$java" -Djava.io.tmpdir="$work/tmp" -cp comm.jar "$here/JarAlone.java" >"$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; echo "FAILED: the 2-rank all_reduce with comm.jar alone exited $?"; exit 1; }
cat "$work/out.txt"
for rank in 0 1; do
  grep -q "rank $rank of 2: .* as the reference, natives from the jar" "$work/out.txt" ||
    { echo "FAILED: rank $rank did not report a correct all_reduce with natives from the jar"; exit 1; }
done
leftover=$(ls -A "$work/tmp")
[ -z "$leftover" ] || { echo "FAILED: the extracted libraries were left behind: $leftover"; exit 1; }
echo "comm.jar alone: 2-rank all_reduce as the reference, natives extracted from the jar and removed"
