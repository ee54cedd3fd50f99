// comm-info --topology: this node's topology, or, started by a launcher as
// several ranks (commrun -n 4 comm-info --topology), the job's: which ranks
// share each node, NUMA domain and socket, and each node's hardware.
#pragma once

// Prints it (in a job, rank 0 prints for everyone); returns the exit status.
int printTopology();
