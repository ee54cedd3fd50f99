#!/bin/sh
# Install the project under WORK/prefix, compile Hello.java against the
# installed comm.jar only (no build tree on any path), run it on 2 ranks.
# The jar finds libcomm_jni in the installation's library folder by itself.
#   run.sh CMAKE BUILD_DIR WORK JAR_DIR_IN_PREFIX JAVAC JAVA COMMRUN
set -eu
cmake=$1 build=$2 work=$3 jar_dir=$4 javac=$5 java=$6 commrun=$7
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work/classes"
"$cmake" --install "$build" --prefix "$work/prefix" >/dev/null
jar="$work/prefix/$jar_dir/comm.jar"
"$javac" -Werror -d "$work/classes" -cp "$jar" "$here/Hello.java"
cd "$work"
"$commrun" -n 2 --timeout 120 "$java" -cp "$jar:$work/classes" Hello
