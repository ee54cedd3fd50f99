/* The keys comm.h lists for comm_config_set are exactly the settings comm
 * has: every listed key is accepted, and comm-info (which prints the
 * settings table itself) shows no variable for a key the header leaves out.
 * usage: config_keys_test PATH/TO/comm.h PATH/TO/comm-info */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "comm.h"

enum { kMaxKeys = 64, kMaxKey = 64 };

static const char *header_path, *info_path;

/* The quoted words of comm.h's key list: from the line that starts it
 * ("Keys (the environment variable ...") to the line naming comm-info. */
static int header_keys(char keys[][kMaxKey]) {
  FILE *f = fopen(header_path, "r");
  assert_non_null(f);
  char line[512];
  int n = 0, in_list = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strstr(line, "Keys (the environment variable") != NULL) {
      in_list = 1;
      continue;
    }
    if (!in_list) continue;
    if (strstr(line, "comm-info") != NULL) break;
    for (const char *q = strchr(line, '"'); q != NULL; q = strchr(q, '"')) {
      const char *end = strchr(q + 1, '"');
      assert_non_null(end);
      assert_true(n < kMaxKeys && end - q - 1 < kMaxKey);
      memcpy(keys[n], q + 1, (size_t)(end - q - 1));
      keys[n++][end - q - 1] = '\0';
      q = end + 1;
    }
  }
  fclose(f);
  if (n == 0) fail_msg("found no key list in %s", header_path);
  return n;
}

/* "COMM_TIMEOUT" for "timeout". */
static void variable_of(const char *key, char *out) {
  strcpy(out, "COMM_");
  size_t at = strlen(out);
  for (const char *c = key; *c != '\0'; ++c) out[at++] = (char)toupper((unsigned char)*c);
  out[at] = '\0';
}

static void every_listed_key_is_accepted(void **state) {
  (void)state;
  char keys[kMaxKeys][kMaxKey];
  int n = header_keys(keys);
  comm_config_t *config = NULL;
  assert_int_equal(comm_config_create(&config), COMM_OK);
  int rejected = 0;
  for (int i = 0; i < n; ++i) {
    if (comm_config_set(config, keys[i], "1") != COMM_OK) {
      print_error("comm.h lists \"%s\": %s\n", keys[i], comm_last_error());
      rejected = 1;
    }
  }
  assert_int_equal(comm_config_set(config, "no_such_key", "1"), COMM_ERR_INVALID_ARGUMENT);
  comm_config_destroy(config);
  assert_false(rejected);
}

static void every_setting_is_listed(void **state) {
  (void)state;
  char keys[kMaxKeys][kMaxKey];
  int n = header_keys(keys);
  char variables[kMaxKeys][kMaxKey + 8];
  for (int i = 0; i < n; ++i) variable_of(keys[i], variables[i]);
  FILE *info = popen(info_path, "r");
  assert_non_null(info);
  char line[1024];
  int settings = 0, missing = 0;
  /* comm-info's settings table: one "  COMM_<KEY>  default ..." line each. */
  while (fgets(line, sizeof line, info) != NULL) {
    if (strncmp(line, "  COMM_", 7) != 0) continue;
    ++settings;
    char variable[kMaxKey + 8];
    assert_int_equal(sscanf(line, " %71s", variable), 1);
    int listed = 0;
    for (int i = 0; i < n; ++i) listed |= strcmp(variables[i], variable) == 0;
    if (!listed) {
      print_error("comm-info shows %s, but comm.h does not list its key\n", variable);
      missing = 1;
    }
  }
  assert_int_equal(pclose(info), 0);
  assert_int_equal(settings, n);
  assert_false(missing);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s comm.h comm-info\n", argv[0]);
    return 2;
  }
  header_path = argv[1];
  info_path = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_listed_key_is_accepted),
      cmocka_unit_test(every_setting_is_listed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
