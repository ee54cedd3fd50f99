package org.libcomm;

import java.io.File;
import java.net.URISyntaxException;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads libcomm_jni, the JNI layer, once, keeping the JVM's signal handlers
 * (see native/signals.c: libraries libfabric pulls in replace them). Where
 * from, first match wins: the folder of the file named by the system
 * property {@code org.libcomm.jni}; the {@code java.library.path}; the jar's
 * own folder (the build tree); the library folder of the installation the
 * jar is in. libcomm_jni_signals lies next to libcomm_jni.
 */
final class NativeLibrary {
  static final String PATH_PROPERTY = "org.libcomm.jni";
  private static final String NAME = "comm_jni";
  private static final String SIGNALS_NAME = "comm_jni_signals";

  private NativeLibrary() {}

  static void load() {
    File folder = folder();
    loadNamed(folder, SIGNALS_NAME);
    saveSignalHandlers();
    try {
      loadNamed(folder, NAME);
    } finally {
      restoreSignalHandlers();
    }
  }

  private static native void saveSignalHandlers();

  private static native void restoreSignalHandlers();

  private static void loadNamed(File folder, String name) {
    if (folder != null) {
      System.load(new File(folder, System.mapLibraryName(name)).getAbsolutePath());
    } else {
      System.loadLibrary(name);
    }
  }

  /** The folder holding libcomm_jni, or null to use java.library.path. */
  private static File folder() {
    String path = System.getProperty(PATH_PROPERTY);
    if (path != null && !path.isEmpty()) {
      return new File(path).getAbsoluteFile().getParentFile();
    }
    String file = System.mapLibraryName(NAME);
    for (String entry : System.getProperty("java.library.path", "").split(File.pathSeparator)) {
      if (!entry.isEmpty() && new File(entry, file).isFile()) {
        return null;
      }
    }
    List<String> tried = new ArrayList<>();
    for (File candidate : besideJar()) {
      if (new File(candidate, file).isFile()) {
        return candidate;
      }
      tried.add(candidate.getPath());
    }
    throw new UnsatisfiedLinkError("org.libcomm: " + file + " is not on java.library.path ("
        + System.getProperty("java.library.path") + ") nor in " + tried + "; set -Djava.library.path or -D"
        + PATH_PROPERTY + "=/path/to/" + file);
  }

  /** The jar's folder and the installation's library folder, seen from the jar. */
  private static List<File> besideJar() {
    List<File> candidates = new ArrayList<>();
    CodeSource source = NativeLibrary.class.getProtectionDomain().getCodeSource();
    if (source == null || source.getLocation() == null) {
      return candidates;
    }
    File jarFolder;
    try {
      jarFolder = new File(source.getLocation().toURI()).getParentFile();
    } catch (URISyntaxException | IllegalArgumentException notAFile) {
      return candidates;
    }
    if (jarFolder == null) {
      return candidates;
    }
    candidates.add(jarFolder);
    candidates.add(new File(jarFolder, NativeLibraryLocation.FROM_INSTALLED_JAR));
    return candidates;
  }
}
