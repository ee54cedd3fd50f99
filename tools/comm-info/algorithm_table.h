// comm-info --algorithms: every algorithm of every collective's selection
// table (algo/selection/registry.h), as ucc_info -A prints UCC's: under each
// collective, each row's index in its table, name, one-line summary and
// traits.
#pragma once

// Prints the table to stdout; returns the exit status.
int printAlgorithms();
