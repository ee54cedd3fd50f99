package org.libcomm;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Why libcomm_jni could not load the C library it needs, in words.
 * libcomm_jni is linked against the libcomm.so.0 it was built with (its
 * RUNPATH), but LD_LIBRARY_PATH or a moved installation can put an older
 * one first. The dynamic loader then refuses with "version `COMM_0.3' not
 * found": each release adds its functions under a version node named after
 * it (docs/abi.md), so the missing node says which release is needed.
 */
final class LibraryVersion {
  private static final Pattern MISSING_NODE =
      Pattern.compile("(/\\S+libcomm\\.so[.\\d]*): version `COMM_([\\d.]+)' not found");
  /** The file an installed libcomm.so.0 link points at: libcomm.so.MAJOR.MINOR.PATCH. */
  private static final Pattern VERSIONED_FILE = Pattern.compile("libcomm\\.so\\.(\\d+\\.\\d+\\.\\d+)");

  private LibraryVersion() {}

  /** An error naming the libcomm found and the one needed, when {@code error} is the loader's missing-version refusal; else {@code error}. */
  static UnsatisfiedLinkError explain(UnsatisfiedLinkError error) {
    Matcher missing = MISSING_NODE.matcher(String.valueOf(error.getMessage()));
    if (!missing.find()) {
      return error;
    }
    String library = missing.group(1);
    UnsatisfiedLinkError explained = new UnsatisfiedLinkError("org.libcomm: this Java binding needs libcomm "
        + missing.group(2) + " or newer, but the loader found " + library + ", which is " + versionOf(library)
        + "; put the libcomm.so.0 the binding was built with first (LD_LIBRARY_PATH) or rebuild the binding"
        + " against the installed one (loader: " + error.getMessage() + ")");
    explained.initCause(error);
    return explained;
  }

  /** "libcomm 0.2.0" from the name of the file the link points at, which Java can read without loading it. */
  private static String versionOf(String library) {
    try {
      Path file = Paths.get(library).toRealPath().getFileName();
      Matcher versioned = VERSIONED_FILE.matcher(file == null ? "" : file.toString());
      if (versioned.matches()) {
        return "libcomm " + versioned.group(1);
      }
      return "a libcomm of unknown version (" + file + " does not name it)";
    } catch (IOException e) {
      return "a libcomm of unknown version (" + e + ")";
    }
  }
}
