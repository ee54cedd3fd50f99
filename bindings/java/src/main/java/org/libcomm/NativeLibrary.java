package org.libcomm;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Loads libcomm_jni, the JNI layer, once, keeping the JVM's signal handlers
 * (see native/signals.c: libraries libfabric pulls in replace them). Where
 * from, first match wins: the folder of the file named by the system
 * property {@code org.libcomm.jni}; the {@code java.library.path}; the jar
 * itself, which carries libcomm_jni, libcomm_jni_signals and libcomm.so for
 * its platform under {@code org/libcomm/native/<os>-<arch>/}; the jar's own
 * folder (the build tree); the library folder of the installation the jar
 * is in. libcomm_jni_signals lies next to libcomm_jni.
 */
final class NativeLibrary {
  static final String PATH_PROPERTY = "org.libcomm.jni";
  private static final String NAME = "comm_jni";
  private static final String SIGNALS_NAME = "comm_jni_signals";
  /** libcomm itself, under its SONAME: libcomm_jni needs it by that name. */
  private static final String LIBCOMM_FILE = "libcomm.so.0";

  private NativeLibrary() {}

  static void load() {
    File folder = configuredFolder();
    if (folder == null && !onLibraryPath()) {
      List<String> tried = new ArrayList<>();
      if (loadFromJar(tried)) {
        return;
      }
      folder = besideJar(tried);
    }
    loadNamed(folder, SIGNALS_NAME);
    saveSignalHandlers();
    try {
      loadNamed(folder, NAME);
    } catch (UnsatisfiedLinkError e) {
      throw LibraryVersion.explain(e);
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

  /** The folder of the file the org.libcomm.jni property names, or null. */
  private static File configuredFolder() {
    String path = System.getProperty(PATH_PROPERTY);
    if (path == null || path.isEmpty()) {
      return null;
    }
    return new File(path).getAbsoluteFile().getParentFile();
  }

  private static boolean onLibraryPath() {
    String file = System.mapLibraryName(NAME);
    for (String entry : System.getProperty("java.library.path", "").split(File.pathSeparator)) {
      if (!entry.isEmpty() && new File(entry, file).isFile()) {
        return true;
      }
    }
    return false;
  }

  /** "linux-x86_64": the folder in the jar for the running platform. */
  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (arch.equals("amd64") || arch.equals("x8664")) {
      arch = "x86_64";
    }
    return os + "-" + arch;
  }

  /**
   * Extract the jar's libraries for this platform into a new private
   * folder and load them from there, libcomm first, so that libcomm_jni
   * finds it already loaded under its SONAME. The files are deleted once
   * loaded (the process keeps its mappings), leaving nothing behind.
   * False when the jar carries none for this platform.
   */
  private static boolean loadFromJar(List<String> tried) {
    String resources = "native/" + platform() + "/";
    String jni = System.mapLibraryName(NAME);
    if (NativeLibrary.class.getResource(resources + jni) == null) {
      tried.add("the jar (no " + resources + jni + " in it)");
      return false;
    }
    Path folder;
    try {
      folder = Files.createTempDirectory("libcomm-jni-");
    } catch (IOException e) {
      throw linkError("cannot make a folder to extract the jar's libraries into: " + e, e);
    }
    List<Path> files = new ArrayList<>();
    try {
      Path signals = extract(resources, System.mapLibraryName(SIGNALS_NAME), folder, files);
      Path libcomm = extract(resources, LIBCOMM_FILE, folder, files);
      Path library = extract(resources, jni, folder, files);
      System.load(signals.toString());
      saveSignalHandlers();
      try {
        System.load(libcomm.toString());
        System.load(library.toString());
      } finally {
        restoreSignalHandlers();
      }
      return true;
    } finally {
      for (Path file : files) {
        file.toFile().delete();
      }
      folder.toFile().delete();
    }
  }

  private static Path extract(String resources, String name, Path folder, List<Path> files) {
    Path target = folder.resolve(name);
    try (InputStream in = NativeLibrary.class.getResourceAsStream(resources + name)) {
      if (in == null) {
        throw linkError("the jar has no " + resources + name + " beside " + System.mapLibraryName(NAME), null);
      }
      Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
      files.add(target);
    } catch (IOException e) {
      throw linkError("cannot extract " + resources + name + " from the jar into " + folder + ": " + e, e);
    }
    return target;
  }

  /** The folder beside the jar (build tree) or the installation's library folder that holds libcomm_jni. */
  private static File besideJar(List<String> tried) {
    String file = System.mapLibraryName(NAME);
    for (File candidate : jarFolders()) {
      if (new File(candidate, file).isFile()) {
        return candidate;
      }
      tried.add(candidate.getPath());
    }
    throw linkError(file + " is not on java.library.path (" + System.getProperty("java.library.path")
        + ") nor in " + tried + "; set -Djava.library.path or -D" + PATH_PROPERTY + "=/path/to/" + file, null);
  }

  /** The jar's folder and the installation's library folder, seen from the jar. */
  private static List<File> jarFolders() {
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

  private static UnsatisfiedLinkError linkError(String message, Throwable cause) {
    UnsatisfiedLinkError error = new UnsatisfiedLinkError("org.libcomm: " + message);
    if (cause != null) {
      error.initCause(cause);
    }
    return error;
  }
}
