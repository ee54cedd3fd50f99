// comm-info --hang-report DIR: merges the flight records ranks wrote to
// COMM_DEBUG_DIR on a timeout or a peer's failure (core/flight_recorder.h)
// and says, per communicator, which rank the others wait for.
#pragma once

#include <string>

// Prints the merged report; returns the exit status (1 when DIR holds no
// flight record or one cannot be read).
int printHangReport(const std::string& dir);
