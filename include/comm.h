/*
 * comm.h - the public C API of comm, a collective-communication library.
 *
 * Conventions (they hold for every function below unless its comment says
 * otherwise):
 *
 *  - Every function returns a comm_status_t: COMM_OK (0) on success, a
 *    negative COMM_ERR_* on failure. On failure comm_last_error() describes
 *    the call, the object and the cause in words. No function aborts the
 *    process or throws.
 *  - Each function's comment lists the statuses it returns ("Errors:").
 *    Besides those, any function that returns a comm_status_t may return
 *    COMM_ERR_NO_MEMORY (an allocation failed) or COMM_ERR_INTERNAL (a bug
 *    in comm). A NULL or destroyed object is COMM_ERR_INVALID_ARGUMENT
 *    (NULL) or COMM_ERR_INVALID_USAGE (destroyed, where detectable).
 *  - "Communication failures" are COMM_ERR_MISMATCH, COMM_ERR_TIMEOUT,
 *    COMM_ERR_REMOTE, COMM_ERR_ABORTED and COMM_ERR_TRANSPORT: a blocking
 *    communication call returns them; an asynchronous one returns COMM_OK
 *    once started and comm_handle_wait/test return them.
 *  - On failure, a pointer out-parameter (the `**out` of a create call,
 *    comm_init, comm_split, comm_shrink, comm_grow, comm_name, comm_tensor_data,
 *    comm_providers and comm_stream, the strings of comm_setting_info, and
 *    the `**handle` of a communication call) is set to NULL when it is not
 *    NULL itself; a scalar out-parameter (an int, size or enum) is left
 *    unchanged.
 *  - Out-parameters come first. The one exception is the optional trailing
 *    `comm_handle_t **handle` of every communication call: NULL means "block
 *    until done"; non-NULL means "return at once and hand me a handle" that
 *    the caller must pass to comm_handle_wait/test and then
 *    comm_handle_destroy.
 *  - Opaque objects are made by *_create (or comm_init) and released by
 *    *_destroy; destroying NULL is a no-op that returns COMM_OK.
 *  - Ranks are ranks of the communicator the call is made on.
 *  - Collective calls must be made by every rank of the communicator, in the
 *    same order, with matching arguments; a mismatch is reported as
 *    COMM_ERR_MISMATCH on the ranks that can see it.
 *  - Buffers described by tensors passed to an asynchronous call must stay
 *    valid and untouched until its handle completes. The tensor descriptors
 *    themselves may be destroyed as soon as the call returns.
 *  - Thread safety: functions on different communicators may be called
 *    concurrently. Collective calls on one communicator (collectives, group
 *    creation, splits) pair up across ranks in the order each rank issues
 *    them, so they must be issued from one thread, or from several one after
 *    the other in an order that is the same on every rank. A collective call
 *    made while another thread is issuing one on the same communicator fails
 *    with COMM_ERR_INVALID_USAGE (the other call goes on): its order against
 *    the other would be a race, decided differently on each rank. Calls that
 *    do not overlap in time cannot be told apart from calls in a planned
 *    order, so that check is no proof. Point-to-point calls, handles and
 *    queries may come from any thread (messages with the same peer and tag
 *    match in the order they are posted). comm_abort may be called from any
 *    thread at any time.
 */
#ifndef COMM_H
#define COMM_H

#include <stddef.h>
#include <stdint.h>

#include "comm_version.h"

#if defined(SWIG)
#define COMM_API
#else
#define COMM_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* In C++ the enums a caller passes in have int as their fixed underlying
 * type, as in C, so a value outside the named ones (a caller's mistake that
 * every entry point reports as COMM_ERR_INVALID_ARGUMENT) is still a value
 * of the type; without it, loading such a value is undefined in C++. The
 * size and the calling convention are those of C's enum either way. */
#if defined(__cplusplus) && !defined(SWIG)
#define COMM_ENUM_INT : int
#else
#define COMM_ENUM_INT
#endif

/* ------------------------------------------------------------------ */
/* Version                                                             */
/* ------------------------------------------------------------------ */

/* COMM_VERSION_MAJOR, _MINOR, _PATCH and _NUMBER (major * 10000 + minor *
 * 100 + patch) come from comm_version.h, which the build generates. */

/** The COMM_VERSION_NUMBER of the library actually loaded. Cannot fail. */
COMM_API unsigned comm_version(void);
/** "MAJOR.MINOR.PATCH" of the library actually loaded; never NULL. Cannot fail. */
COMM_API const char *comm_version_string(void);

/* ------------------------------------------------------------------ */
/* Status and errors                                                   */
/* ------------------------------------------------------------------ */

typedef enum comm_status COMM_ENUM_INT {
    COMM_OK = 0,
    /** Returned by comm_handle_test while the operation is still running. */
    COMM_IN_PROGRESS = 1,
    COMM_ERR_INVALID_ARGUMENT = -1, /**< a NULL, out-of-range or inconsistent argument */
    COMM_ERR_INVALID_USAGE = -2, /**< a call in the wrong state: destroyed object, freed twice... */
    COMM_ERR_NOT_SUPPORTED = -3, /**< valid, but not in this build or this library version */
    COMM_ERR_NO_MEMORY = -4,
    COMM_ERR_TIMEOUT = -5,    /**< a deadline passed; the message names what was awaited */
    COMM_ERR_REMOTE = -6,     /**< a peer died or reported failure; the message names it */
    COMM_ERR_MISMATCH = -7,   /**< ranks called different collectives or arguments */
    COMM_ERR_ABORTED = -8,    /**< comm_abort was called on this communicator */
    COMM_ERR_TRANSPORT = -9,  /**< the fabric failed */
    COMM_ERR_BOOTSTRAP = -10, /**< rendezvous or launcher environment failed */
    COMM_ERR_INTERNAL = -11,  /**< a bug in comm; please report the message */
    COMM_ERR_REVOKED = -12    /**< the communicator was revoked; the message names by which rank */
} comm_status_t;

/** A short constant description of a status; never NULL (unknown codes too). Cannot fail. */
COMM_API const char *comm_status_string(comm_status_t status);

/**
 * The message of the last failed comm_* call on this thread, naming call,
 * object and cause ("comm_all_reduce: count 1000 differs from rank 1's 1024").
 * Never NULL: "" when no call has failed on this thread. The pointer stays
 * valid until the next comm_* call on this thread. Cannot fail.
 */
COMM_API const char *comm_last_error(void);

/* ------------------------------------------------------------------ */
/* Version check, features and providers                               */
/* ------------------------------------------------------------------ */

/**
 * Check that the library loaded at run time can serve a program compiled
 * against this header: call COMM_CHECK_VERSION() (or comm_check_version with
 * the version the program was built for) before anything else. The library
 * must have the same major version (minor versions only add to the API,
 * majors may change it) and a minor version at least `minor`.
 * Errors: COMM_ERR_NOT_SUPPORTED naming both versions when the library is
 * of another major or an older minor; COMM_ERR_INVALID_ARGUMENT for a
 * negative number. Not collective; thread-safe.
 */
COMM_API comm_status_t comm_check_version(int major, int minor);
#define COMM_CHECK_VERSION() comm_check_version(COMM_VERSION_MAJOR, COMM_VERSION_MINOR)

/** What a build of comm may or may not have. */
typedef enum comm_feature COMM_ENUM_INT {
    COMM_FEATURE_CUDA = 0 /**< tensors in CUDA device memory (COMM_MEMORY_CUDA) */
} comm_feature_t;

/**
 * *out = 1 when this build of the library has `feature`, else 0.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out NULL, or a feature the loaded
 * library does not know: it is older than this header). Thread-safe.
 */
COMM_API comm_status_t comm_has_feature(int *out, comm_feature_t feature);

/**
 * *out_count = the number of CUDA devices this process sees: 0 in a build
 * without CUDA (comm_has_feature(COMM_FEATURE_CUDA) is 0) and on a machine
 * without a GPU or driver. When it is 0 and `out_reason` is not NULL,
 * *out_reason says why in words ("cudaGetDeviceCount returned 35
 * (cudaErrorInsufficientDriver: ...)"), else "". The string belongs to the
 * library and stays valid until the process ends. The first call asks the
 * CUDA runtime. Errors: COMM_ERR_INVALID_ARGUMENT (out_count NULL).
 * Not collective; thread-safe.
 */
COMM_API comm_status_t comm_cuda_device_count(int *out_count, const char **out_reason);

/**
 * *out = the values of the "provider" setting (COMM_PROVIDER) that work on
 * this machine, comma-separated: "tcp" (comm's own TCP transport) first,
 * then every libfabric provider that offers what comm needs, in libfabric's
 * order of preference (e.g. "tcp,shm,tcp;ofi_rxm"). The string belongs to
 * the library and stays valid until the process ends. The first call asks
 * libfabric. Errors: COMM_ERR_INVALID_ARGUMENT (out NULL),
 * COMM_ERR_TRANSPORT (libfabric could not be asked), COMM_ERR_NO_MEMORY.
 * Not collective; thread-safe.
 */
COMM_API comm_status_t comm_providers(const char **out);

/* ------------------------------------------------------------------ */
/* Data types, reduce ops, memory types                                */
/* ------------------------------------------------------------------ */

typedef enum comm_dtype COMM_ENUM_INT {
    COMM_INT8 = 0,
    COMM_UINT8 = 1,
    COMM_INT16 = 2,
    COMM_UINT16 = 3,
    COMM_INT32 = 4,
    COMM_UINT32 = 5,
    COMM_INT64 = 6,
    COMM_UINT64 = 7,
    COMM_FLOAT16 = 8,
    COMM_BFLOAT16 = 9,
    COMM_FLOAT32 = 10,
    COMM_FLOAT64 = 11,
    COMM_BOOL = 12
} comm_dtype_t;

/** Size in bytes of one element of `dtype`, or 0 for an unknown dtype. Cannot fail. */
COMM_API size_t comm_dtype_size(comm_dtype_t dtype);
/** Lower-case name ("float32"); "unknown" for an unknown dtype; never NULL. Cannot fail. */
COMM_API const char *comm_dtype_name(comm_dtype_t dtype);

/**
 * Reduce ops. On COMM_BOOL (any non-zero byte is true; results are 0 or 1)
 * SUM and MAX are logical or, PROD and MIN logical and, BAND/BOR/BXOR
 * logical and/or/xor, as in PyTorch; AVG is not defined for bool. An op not
 * defined for the dtype is COMM_ERR_INVALID_ARGUMENT.
 */
typedef enum comm_op COMM_ENUM_INT {
    COMM_OP_SUM = 0,
    COMM_OP_PROD = 1,
    COMM_OP_MIN = 2,
    COMM_OP_MAX = 3,
    COMM_OP_AVG = 4,  /**< sum / group size (integers truncate toward zero); not bool */
    COMM_OP_BAND = 5, /**< integer and bool types only */
    COMM_OP_BOR = 6,  /**< integer and bool types only */
    COMM_OP_BXOR = 7  /**< integer and bool types only */
} comm_op_t;

/** Lower-case name ("sum"); "unknown" for an unknown op; never NULL. Cannot fail. */
COMM_API const char *comm_op_name(comm_op_t op);

typedef enum comm_memory_type COMM_ENUM_INT {
    COMM_MEMORY_HOST = 0,
    COMM_MEMORY_CUDA = 1
} comm_memory_type_t;

/* ------------------------------------------------------------------ */
/* Tensor descriptors                                                  */
/* ------------------------------------------------------------------ */

/** Most dimensions a tensor descriptor can have. */
#define COMM_MAX_DIMS 8

/**
 * A description of a dense, C-contiguous array: data pointer, dtype, shape,
 * memory type and device. The descriptor does not own the data.
 */
typedef struct comm_tensor comm_tensor_t;

/**
 * Describe `data` as a host array of `dtype` with `ndim` (0..COMM_MAX_DIMS)
 * dimensions `shape[0..ndim)` (each >= 0; shape may be NULL when ndim is 0).
 * `data` may be NULL only when the tensor has no elements.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out NULL, an unknown dtype, ndim or a
 * dim out of range, shape NULL, data NULL with elements), COMM_ERR_NO_MEMORY.
 * Thread-safe, like every comm_tensor_* call on different descriptors.
 */
COMM_API comm_status_t comm_tensor_create(comm_tensor_t **out, void *data, comm_dtype_t dtype,
                                          int ndim, const int64_t *shape);
/**
 * Release a descriptor (not the data). NULL is a no-op.
 * Errors: COMM_ERR_INVALID_USAGE (destroyed before).
 */
COMM_API comm_status_t comm_tensor_destroy(comm_tensor_t *tensor);
/**
 * Re-point the descriptor at other data of the same dtype and shape.
 * Errors: COMM_ERR_INVALID_ARGUMENT (tensor NULL, data NULL with elements),
 * COMM_ERR_INVALID_USAGE (a destroyed tensor).
 */
COMM_API comm_status_t comm_tensor_set_data(comm_tensor_t *tensor, void *data);
/**
 * Say where the data lives: host memory, or the memory of CUDA device
 * `device` (>= 0; comm_tensor_memory reports it back). CUDA memory needs a
 * build of comm with CUDA (comm_has_feature(COMM_FEATURE_CUDA)) and a
 * device that exists (comm_cuda_device_count). Whether the data really is
 * memory of that device (or host memory, for COMM_MEMORY_HOST) is checked
 * by the calls that use the tensor, since the data may be re-pointed.
 * Errors: COMM_ERR_NOT_SUPPORTED (CUDA memory in a build without CUDA, or
 * with no CUDA device visible: the message gives the CUDA runtime's
 * reason), COMM_ERR_INVALID_ARGUMENT (unknown type, negative device, no such
 * CUDA device), COMM_ERR_INVALID_USAGE (a destroyed tensor). The descriptor
 * is unchanged after a failure.
 */
COMM_API comm_status_t comm_tensor_set_memory(comm_tensor_t *tensor, comm_memory_type_t type,
                                              int device);
/*
 * The queries below read one property of a descriptor.
 * Errors (each of them): COMM_ERR_INVALID_ARGUMENT (an out-parameter or the
 * tensor NULL), COMM_ERR_INVALID_USAGE (a destroyed tensor).
 */
/** The data pointer. Errors: see above. */
COMM_API comm_status_t comm_tensor_data(void **out, const comm_tensor_t *tensor);
/** The dtype. Errors: see above. */
COMM_API comm_status_t comm_tensor_dtype(comm_dtype_t *out, const comm_tensor_t *tensor);
/** The number of dimensions. Errors: see above. */
COMM_API comm_status_t comm_tensor_ndim(int *out, const comm_tensor_t *tensor);
/** Dimension `dim`. Errors: see above, and COMM_ERR_INVALID_ARGUMENT unless 0 <= dim < ndim. */
COMM_API comm_status_t comm_tensor_dim(int64_t *out, const comm_tensor_t *tensor, int dim);
/** Number of elements (1 for a 0-d tensor). Errors: see above. */
COMM_API comm_status_t comm_tensor_numel(int64_t *out, const comm_tensor_t *tensor);
/** Size of the data in bytes. Errors: see above. */
COMM_API comm_status_t comm_tensor_nbytes(size_t *out, const comm_tensor_t *tensor);
/** Memory type and device, as comm_tensor_set_memory set them. Errors: see above. */
COMM_API comm_status_t comm_tensor_memory(comm_memory_type_t *out_type, int *out_device,
                                          const comm_tensor_t *tensor);

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

/**
 * Keyed settings for comm_init. A new config holds no settings; every key
 * not set falls back to its environment variable, then to its default.
 * Keys (the environment variable is COMM_ + the key in upper case):
 *   "rank", "world_size", "local_rank", "local_world_size",
 *   "master_addr", "master_port", "job_secret", "job_secret_file",
 *   "join" (1: join a running job through comm_grow), "timeout" (seconds),
 *   "provider", "shm", "cuda_ipc", "tcp_iface",
 *   "tcp_unexpected_bytes", "log_level", "log_file", "algo", "debug_dir",
 *   "test_ranks_per_node" (for tests: fake nodes of that many ranks),
 *   "test_communicator_ids" (for tests: only that many communicator ids).
 * `comm-info` lists every key with its default and help.
 */
typedef struct comm_config comm_config_t;

/** An empty config. Errors: COMM_ERR_INVALID_ARGUMENT (out NULL). Thread-safe. */
COMM_API comm_status_t comm_config_create(comm_config_t **out);
/** Release a config. NULL is a no-op. Errors: COMM_ERR_INVALID_USAGE (destroyed before). */
COMM_API comm_status_t comm_config_destroy(comm_config_t *config);
/**
 * Set `key` to `value` (copied); a later set of the same key wins. Values are
 * checked by comm_init. Errors: COMM_ERR_INVALID_ARGUMENT (an argument NULL,
 * an unknown key), COMM_ERR_INVALID_USAGE (a destroyed config).
 */
COMM_API comm_status_t comm_config_set(comm_config_t *config, const char *key, const char *value);

/**
 * The number of settings: the keys comm_config_set takes, which
 * comm_setting_info describes one by one.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out NULL). Thread-safe.
 */
COMM_API comm_status_t comm_setting_count(int *out);
/**
 * Setting `index` (0 .. comm_setting_count - 1, always in the same order):
 * its key (the environment variable is COMM_ and the key in upper case),
 * its default ("" for none), one line of help, and its value in this
 * process's environment, as comm_init without a config would read it: NULL
 * when the variable is not set (the default applies), "(not shown)" for a
 * secret (job_secret) that is set. Every out-parameter but out_key may be
 * NULL. Key, default and help are the library's for as long as the process
 * runs; the value holds until this thread's next comm_setting_info call.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out_key NULL, index out of range).
 * Thread-safe.
 */
COMM_API comm_status_t comm_setting_info(const char **out_key, const char **out_default,
                                         const char **out_help, const char **out_value, int index);

/* ------------------------------------------------------------------ */
/* Communicators                                                       */
/* ------------------------------------------------------------------ */

typedef struct comm_communicator comm_t;
/** An operation started asynchronously: see "Handles" below. */
typedef struct comm_handle comm_handle_t;

/**
 * Join the world: read the launcher's environment (commrun, torchrun, msrun,
 * Slurm, Open MPI) overridden by `config` (may be NULL), meet the other ranks
 * through the rendezvous store and connect the fabric. Every rank must call
 * it. Waits at most the configured timeout. A process has one world at a
 * time: once it and every communicator made from it are destroyed, every
 * rank may call comm_init again to join a new world (where rank 0 hosts the
 * store, after every rank destroyed its old one).
 * Errors: COMM_ERR_INVALID_ARGUMENT (out NULL; a missing, malformed or
 * contradictory setting or launcher variable, named), COMM_ERR_INVALID_USAGE
 * (a destroyed config; this process's world still alive), COMM_ERR_BOOTSTRAP (the rendezvous
 * store), COMM_ERR_TRANSPORT (the fabric), COMM_ERR_NOT_SUPPORTED (a provider that lacks what comm
 * needs), COMM_ERR_TIMEOUT (other ranks did not come).
 */
COMM_API comm_status_t comm_init(comm_t **out, const comm_config_t *config);

/**
 * comm_init without blocking: returns at once with the communicator in
 * `*out` and a handle in `*handle` that completes (comm_handle_test/wait)
 * once the world is joined, with comm_init's status. Until then every call
 * on `*out` fails with COMM_ERR_INVALID_USAGE saying it is still being
 * made; comm_abort or comm_destroy on it completes the handle at once with
 * COMM_ERR_ABORTED (the joining goes on in the background until it ends,
 * and what it made is freed). `*out` must be destroyed whatever the
 * handle's status, and the handle too. The same holds for
 * comm_split_async, comm_group_create_async, comm_shrink_async and
 * comm_grow_async.
 * Errors: those of comm_init, and COMM_ERR_INVALID_ARGUMENT (handle NULL).
 */
COMM_API comm_status_t comm_init_async(comm_t **out, const comm_config_t *config,
                                       comm_handle_t **handle);

/**
 * Release a communicator: waits (up to its timeout) for its pending
 * operations, then frees it. Destroying the world communicator closes the
 * fabric; groups made from it must be destroyed first. Not collective.
 * NULL is a no-op. Callable from any thread: a call another thread is
 * making on `comm` meanwhile fails with COMM_ERR_ABORTED saying the
 * communicator was destroyed, and comm_destroy frees it only once that call
 * has returned. Errors: COMM_ERR_INVALID_USAGE (destroyed before),
 * COMM_ERR_TIMEOUT (a call on another thread did not return within the
 * timeout; the communicator then stays allocated).
 */
COMM_API comm_status_t comm_destroy(comm_t *comm);

/**
 * Abort: every pending and future wait on `comm` (and on groups made from a
 * world communicator, when `comm` is the world) returns COMM_ERR_ABORTED.
 * Callable from any thread, including while another thread waits on `comm`.
 * The communicator must still be destroyed. Not collective.
 * Errors: COMM_ERR_INVALID_ARGUMENT (comm NULL), COMM_ERR_INVALID_USAGE (a
 * destroyed communicator).
 */
COMM_API comm_status_t comm_abort(comm_t *comm);

/**
 * Revoke: every pending and future operation on `comm` fails with
 * COMM_ERR_REVOKED, on this rank and on every other live member, whose
 * message names the rank that revoked it and the first failure it knew of.
 * comm carries the news itself: each member that learns of it passes it on,
 * so it reaches every live member even when the revoking rank dies right
 * after. Operations that completed before a member learned of it stay
 * completed. Use it when one rank sees a failure the others may be blocked
 * behind; then destroy the communicator and go on with the survivors.
 * Callable from any thread; revoking twice is a no-op. Not collective (only
 * one rank need call it). Errors: COMM_ERR_INVALID_ARGUMENT (comm NULL),
 * COMM_ERR_INVALID_USAGE (a destroyed communicator).
 */
COMM_API comm_status_t comm_revoke(comm_t *comm);

/*
 * The queries below read one property of a communicator; none is collective.
 * Errors (each of them): COMM_ERR_INVALID_ARGUMENT (out or comm NULL),
 * COMM_ERR_INVALID_USAGE (a destroyed communicator).
 */
/** This rank's rank in `comm`. Errors: see above. */
COMM_API comm_status_t comm_rank(int *out, const comm_t *comm);
/** Number of ranks of `comm`. Errors: see above. */
COMM_API comm_status_t comm_size(int *out, const comm_t *comm);
/** Rank among the ranks of this communicator on the same node. Errors: see above. */
COMM_API comm_status_t comm_local_rank(int *out, const comm_t *comm);
/** Number of ranks of this communicator on the same node. Errors: see above. */
COMM_API comm_status_t comm_local_size(int *out, const comm_t *comm);
/**
 * Number of nodes (hosts) the ranks of `comm` run on. Ranks share a node
 * when they share host name, boot and pid namespace. Errors: see above.
 */
COMM_API comm_status_t comm_node_count(int *out, const comm_t *comm);
/**
 * This rank's node in `comm`, 0 .. comm_node_count - 1: nodes are numbered
 * by their lowest rank in `comm`, so rank 0 is on node 0. Errors: see above.
 */
COMM_API comm_status_t comm_node_id(int *out, const comm_t *comm);
/** The communicator's name ("world" for the world); valid while `comm` lives. Errors: see above. */
COMM_API comm_status_t comm_name(const char **out, const comm_t *comm);
/** The deadline of every wait on `comm`, in milliseconds. Errors: see above. */
COMM_API comm_status_t comm_timeout(int64_t *out_ms, const comm_t *comm);

/**
 * The world rank of the first failed rank this rank knows of (-1: none):
 * the rank whose end made an operation on `comm` or another communicator
 * of its world fail with COMM_ERR_REMOTE, as this rank saw it or as commrun
 * or another rank reported it. Every such error message names it with its
 * pid and host. comm_rank_from_world gives its rank in a group. Not
 * collective; thread-safe.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out or comm NULL),
 * COMM_ERR_INVALID_USAGE (a destroyed communicator).
 */
COMM_API comm_status_t comm_failed_rank(int *out, const comm_t *comm);

/**
 * The ranks of `comm` this rank knows to have failed, ascending: those it
 * saw end, and those commrun or another rank reported. Writes at most
 * `capacity` of them to `out_ranks` (which may be NULL when capacity is 0)
 * and their number to `*out_count`, which may exceed `capacity`. What one
 * rank knows, not an agreement: comm_agree and comm_shrink give every live
 * rank the same set. Not collective; thread-safe.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out_count or comm NULL, a negative
 * capacity, out_ranks NULL with capacity > 0), COMM_ERR_INVALID_USAGE (a
 * destroyed communicator).
 */
COMM_API comm_status_t comm_failed_ranks(int *out_count, int *out_ranks, int capacity,
                                         const comm_t *comm);

/**
 * Fault-tolerant agreement (ULFM's MPIX_Comm_agree): every live rank of
 * `comm` calls it with its `*flags`, and each returns with `*flags` set to
 * the bitwise AND of the flags of the ranks that took part, and with the
 * same set of failed ranks: every rank that did not take part, which the
 * others proved dead. It needs nothing from a dead rank and holds when
 * ranks die during the call: all live ranks still return the same values.
 * Use it to decide together whether a step committed. The failed ranks go
 * to `out_failed_ranks` (at most `capacity`; may be NULL when capacity is 0)
 * and their number to `*out_failed_count` (may be NULL). Collective over
 * the live ranks, through the rendezvous store (commrun's outlives every
 * rank; without commrun, rank 0 hosts it and must live).
 * Errors: COMM_ERR_INVALID_ARGUMENT (flags or comm NULL, a negative
 * capacity, out_failed_ranks NULL with capacity > 0),
 * COMM_ERR_INVALID_USAGE (a destroyed communicator), COMM_ERR_REVOKED (a
 * revoked communicator: shrink it, then agree on the new one),
 * COMM_ERR_ABORTED, COMM_ERR_TIMEOUT (naming the ranks that neither took
 * part nor are known to have failed by the deadline), COMM_ERR_REMOTE
 * (the others found this rank failed and agreed without it),
 * COMM_ERR_BOOTSTRAP (the store is gone).
 */
COMM_API comm_status_t comm_agree(uint32_t *flags, int *out_failed_count, int *out_failed_ranks,
                                  int capacity, comm_t *comm);

/**
 * Shrink: the live ranks of `comm` agree on which ranks failed (as
 * comm_agree) and make a communicator of the others, renumbered in their
 * order in `comm`. Every live rank calls it; it needs nothing from a dead
 * rank, tolerates ranks dying while it runs and returns within the
 * deadline. `comm` may be revoked (the usual way: revoke, then shrink),
 * and is left as it was: destroy it after. With no failure the result is
 * a copy of `comm`. A rank that dies after the others agreed is in the new
 * communicator, whose next operation names it: shrink again. `name`
 * (copied) may be NULL for "<comm's name>-shrunk". Groups and splits of
 * the result work as usual. Over libfabric's tcp;ofi_rxm, whose connections
 * may stop delivering after a death, the result is a world of its own with
 * new connections, as comm_grow's (comm_rank_to_world numbers that world).
 * Errors: COMM_ERR_INVALID_ARGUMENT (out or comm NULL),
 * COMM_ERR_INVALID_USAGE (a destroyed communicator), COMM_ERR_ABORTED, and
 * those of comm_agree but COMM_ERR_REVOKED.
 */
COMM_API comm_status_t comm_shrink(comm_t **out, comm_t *comm, const char *name);

/**
 * comm_shrink without blocking (see comm_init_async and
 * comm_group_create_async).
 * Errors: those of comm_shrink, and COMM_ERR_INVALID_ARGUMENT (handle NULL).
 */
COMM_API comm_status_t comm_shrink_async(comm_t **out, comm_t *comm, const char *name,
                                         comm_handle_t **handle);

/**
 * Grow: the ranks of `comm` take in `count` new ranks, processes started
 * later whose comm_init ran with the setting join=1 (COMM_JOIN=1; commrun
 * --replace starts replacements so), and make a communicator of them all:
 * the ranks of `comm` keep their ranks, the newcomers get the next ones in
 * the order they arrived, and each newcomer's comm_init returns its part
 * of the result. Every rank of `comm` calls it with the same `count`; the
 * newcomers may start before or after. State transfer is the
 * application's (a broadcast from a rank of `comm`). The result belongs to
 * a world of its own: `comm`, and what was made from it, go on working;
 * destroy them when done. Waits at most the deadline of `comm` for the
 * newcomers, then fails on every rank, and a newcomer still waiting fails
 * too. A rank (old or new) that dies while the result is made fails it on
 * the others, naming it. `comm` must have no failed rank (shrink it first)
 * and must have been launched with a store (not a world of one rank).
 * `name` (copied) may be NULL for "<comm's name>-grown".
 * Errors: COMM_ERR_INVALID_ARGUMENT (out or comm NULL; count outside
 * 1..65535; members passed different counts), COMM_ERR_INVALID_USAGE (a
 * destroyed communicator; a world of one rank), COMM_ERR_REVOKED,
 * COMM_ERR_REMOTE (a rank of `comm` has failed, or one died while the
 * result was made), COMM_ERR_TIMEOUT (the newcomers did not come),
 * COMM_ERR_ABORTED, COMM_ERR_BOOTSTRAP, COMM_ERR_TRANSPORT.
 */
COMM_API comm_status_t comm_grow(comm_t **out, comm_t *comm, int count, const char *name);

/**
 * comm_grow without blocking (see comm_init_async).
 * Errors: those of comm_grow, and COMM_ERR_INVALID_ARGUMENT (handle NULL).
 */
COMM_API comm_status_t comm_grow_async(comm_t **out, comm_t *comm, int count, const char *name,
                                       comm_handle_t **handle);

/**
 * Deadline for every wait on `comm`, in milliseconds (> 0). Default: the
 * "timeout" setting. Not collective.
 * Errors: COMM_ERR_INVALID_ARGUMENT (comm NULL, timeout_ms <= 0),
 * COMM_ERR_INVALID_USAGE (a destroyed communicator).
 */
COMM_API comm_status_t comm_set_timeout(comm_t *comm, int64_t timeout_ms);

/**
 * Order the collectives of `comm` on CUDA tensors on `stream` (a
 * cudaStream_t of the device of those tensors, passed as void* so that this
 * header needs no CUDA header; NULL goes back to no stream). docs/cuda.md
 * explains the semantics; in short, a collective on CUDA tensors called
 * while a stream is set:
 *  - returns at once, without the host waiting for the stream;
 *  - starts after the work already enqueued on `stream`;
 *  - holds the work enqueued on `stream` after the call until its result is
 *    in the output tensors;
 *  - still completes its handle, when one was asked for, on the host.
 * A stream-ordered call made without a handle reports a communication
 * failure through the log (its outputs are then undefined; the stream goes
 * on). Collectives on host tensors, sends and receives ignore the stream.
 * Every rank chooses its own stream. Not collective. The stream must stay
 * valid while collectives ordered on it are outstanding. comm asks the CUDA
 * runtime for the stream's device (cudaStreamGetDevice), which cannot
 * safely tell every pointer that is not a live stream: pass live streams
 * only.
 * Errors: COMM_ERR_INVALID_ARGUMENT (comm NULL, a stream the CUDA runtime
 * does not know), COMM_ERR_NOT_SUPPORTED (a non-NULL stream in a build
 * without CUDA or with no device visible), COMM_ERR_INVALID_USAGE (a
 * destroyed communicator).
 */
COMM_API comm_status_t comm_set_stream(comm_t *comm, void *stream);
/**
 * *out = the stream comm_set_stream set on `comm`, or NULL.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out or comm NULL), COMM_ERR_INVALID_USAGE
 * (a destroyed communicator).
 */
COMM_API comm_status_t comm_stream(void **out, const comm_t *comm);

/* ------------------------------------------------------------------ */
/* Groups                                                              */
/* ------------------------------------------------------------------ */

/** Passed as `color` to comm_split by ranks that join no group. */
#define COMM_UNDEFINED (-1)

/**
 * Make a communicator of the ranks `ranks[0..nranks)` of `parent` (distinct,
 * in the new communicator's rank order). Called by the member ranks only,
 * all with the same list. `name` (copied) may be NULL for a generated one.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out, parent or ranks NULL; nranks or a
 * rank out of range; a rank twice), COMM_ERR_INVALID_USAGE (this rank is
 * not in `ranks`; a destroyed parent), COMM_ERR_BOOTSTRAP or
 * COMM_ERR_TIMEOUT (the members meet through the rendezvous store).
 */
COMM_API comm_status_t comm_group_create(comm_t **out, comm_t *parent, int nranks, const int *ranks,
                                         const char *name);

/**
 * comm_group_create without blocking (see comm_init_async). While a
 * communicator is being made from `parent`, making another from it fails
 * with COMM_ERR_INVALID_USAGE: wait for the first. Collectives on `parent`
 * may run meanwhile.
 * Errors: those of comm_group_create, and COMM_ERR_INVALID_ARGUMENT (handle NULL).
 */
COMM_API comm_status_t comm_group_create_async(comm_t **out, comm_t *parent, int nranks,
                                               const int *ranks, const char *name,
                                               comm_handle_t **handle);

/**
 * Split `parent`: ranks with the same `color` (>= 0) form a communicator,
 * ordered by `key` then by parent rank. Every rank of `parent` calls it; a
 * rank passing COMM_UNDEFINED gets *out = NULL.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out or parent NULL, a negative color
 * other than COMM_UNDEFINED), COMM_ERR_INVALID_USAGE (a destroyed parent),
 * COMM_ERR_BOOTSTRAP or COMM_ERR_TIMEOUT (the ranks meet through the
 * rendezvous store).
 */
COMM_API comm_status_t comm_split(comm_t **out, comm_t *parent, int color, int key,
                                  const char *name);

/**
 * comm_split without blocking (see comm_init_async and
 * comm_group_create_async). A rank passing COMM_UNDEFINED gets *out = NULL
 * and still a handle, which completes once its part is done.
 * Errors: those of comm_split, and COMM_ERR_INVALID_ARGUMENT (handle NULL).
 */
COMM_API comm_status_t comm_split_async(comm_t **out, comm_t *parent, int color, int key,
                                        const char *name, comm_handle_t **handle);

/**
 * Split `parent` by node: the ranks of `parent` on this rank's node form
 * *out, in their `parent` order (comm_split with comm_node_id as colour and
 * the parent rank as key). Every rank of `parent` calls it. `name` (copied)
 * may be NULL for a generated one.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out or parent NULL),
 * COMM_ERR_INVALID_USAGE (a destroyed parent), COMM_ERR_BOOTSTRAP or
 * COMM_ERR_TIMEOUT (the ranks meet through the rendezvous store).
 */
COMM_API comm_status_t comm_split_by_node(comm_t **out, comm_t *parent, const char *name);

/**
 * The world rank of rank `rank` of `comm`. Not collective.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out or comm NULL, rank out of range),
 * COMM_ERR_INVALID_USAGE (a destroyed communicator).
 */
COMM_API comm_status_t comm_rank_to_world(int *out, const comm_t *comm, int rank);
/**
 * The rank in `comm` of world rank `world_rank`, or -1 when it is not a
 * member. Not collective.
 * Errors: COMM_ERR_INVALID_ARGUMENT (out or comm NULL, world_rank out of
 * range), COMM_ERR_INVALID_USAGE (a destroyed communicator).
 */
COMM_API comm_status_t comm_rank_from_world(int *out, const comm_t *comm, int world_rank);

/* ------------------------------------------------------------------ */
/* Handles                                                             */
/* ------------------------------------------------------------------ */

/* comm_handle_t (declared with comm_t): an operation started asynchronously. */

/** Pass as timeout_ms to wait up to the communicator's own deadline. */
#define COMM_TIMEOUT_DEFAULT (-1)

/**
 * Wait until the operation completes, at most `timeout_ms` (or the
 * communicator's deadline for COMM_TIMEOUT_DEFAULT). Returns the operation's
 * status; COMM_ERR_TIMEOUT when this wait ran out (the operation goes on and
 * may be waited again). Waiting again on a completed handle returns the same
 * status.
 * Returns: COMM_OK, a communication failure of the operation, or
 * COMM_ERR_TIMEOUT for this wait; COMM_ERR_INVALID_ARGUMENT (handle NULL, a
 * negative timeout other than COMM_TIMEOUT_DEFAULT), COMM_ERR_INVALID_USAGE
 * (a destroyed handle).
 */
COMM_API comm_status_t comm_handle_wait(comm_handle_t *handle, int64_t timeout_ms);

/**
 * Whether the operation has completed, without waiting.
 * Returns: COMM_OK when complete, COMM_IN_PROGRESS when not yet, else the
 * operation's communication failure; COMM_ERR_INVALID_ARGUMENT (handle
 * NULL), COMM_ERR_INVALID_USAGE (a destroyed handle).
 */
COMM_API comm_status_t comm_handle_test(comm_handle_t *handle);

/**
 * Release a handle. A handle still running is first waited for (up to its
 * communicator's deadline), so buffers are never written after destroy
 * returns; the operation's own status is comm_handle_wait's to report. NULL
 * is a no-op.
 * Errors: COMM_ERR_INVALID_USAGE (destroyed before, where detectable).
 */
COMM_API comm_status_t comm_handle_destroy(comm_handle_t *handle);

/* ------------------------------------------------------------------ */
/* Point-to-point                                                      */
/* ------------------------------------------------------------------ */

/** Largest user tag; tags are 0..COMM_TAG_MAX. */
#define COMM_TAG_MAX 0x7fffffff

/**
 * Send `tensor` to `peer` with `tag`. Messages between two ranks with the
 * same tag arrive in order.
 * Errors: COMM_ERR_INVALID_ARGUMENT (comm or tensor NULL, peer out of range,
 * a negative tag), COMM_ERR_INVALID_USAGE (a destroyed comm or tensor),
 * communication failures.
 */
COMM_API comm_status_t comm_send(comm_t *comm, const comm_tensor_t *tensor, int peer, int tag,
                                 comm_handle_t **handle);
/**
 * Receive into `tensor` from `peer` with `tag`. The message must have the
 * tensor's byte size exactly (COMM_ERR_MISMATCH otherwise).
 * Errors: as comm_send's.
 */
COMM_API comm_status_t comm_recv(comm_t *comm, comm_tensor_t *tensor, int peer, int tag,
                                 comm_handle_t **handle);

/**
 * A batch of sends and receives started together: it completes without
 * deadlock whatever the order of its entries and whatever the order of other
 * ranks' batches. Several entries with the same peer and tag match in order.
 */
typedef struct comm_batch comm_batch_t;

/** An empty batch. Errors: COMM_ERR_INVALID_ARGUMENT (out NULL). */
COMM_API comm_status_t comm_batch_create(comm_batch_t **out);
/** Release a batch. NULL is a no-op. Errors: COMM_ERR_INVALID_USAGE (destroyed before). */
COMM_API comm_status_t comm_batch_destroy(comm_batch_t *batch);
/**
 * Append a send. The tensor descriptor is copied; its data must stay valid.
 * Errors: COMM_ERR_INVALID_ARGUMENT (batch or tensor NULL, a negative peer
 * or tag), COMM_ERR_INVALID_USAGE (a destroyed batch or tensor).
 */
COMM_API comm_status_t comm_batch_add_send(comm_batch_t *batch, const comm_tensor_t *tensor,
                                           int peer, int tag);
/** Append a receive, as comm_batch_add_send appends a send. Errors: as comm_batch_add_send's. */
COMM_API comm_status_t comm_batch_add_recv(comm_batch_t *batch, comm_tensor_t *tensor, int peer,
                                           int tag);
/**
 * Start every entry of `batch` on `comm`. The batch may be reused or
 * destroyed at once.
 * Errors: COMM_ERR_INVALID_ARGUMENT (comm or batch NULL, a peer out of
 * range of `comm`), COMM_ERR_INVALID_USAGE (a destroyed comm or batch),
 * communication failures.
 */
COMM_API comm_status_t comm_batch_start(comm_t *comm, const comm_batch_t *batch,
                                        comm_handle_t **handle);

/* ------------------------------------------------------------------ */
/* Collectives                                                         */
/* ------------------------------------------------------------------ */

/**
 * Collectives write into caller-provided outputs whose sizes are checked.
 * Tensors of one call share a dtype and memory type. "Rows" are slices along
 * dim 0: a tensor of shape [d0, d1, ...] has d0 rows of shape [d1, ...]
 * (a 0-d tensor is one row of one element, like a row of a 1-d tensor).
 * Where a call is described in rows, its tensors' rows must have the same
 * shape (dims after dim 0 equal, not merely the same element count) and
 * dim 0 must hold the stated number of rows; otherwise the call returns
 * COMM_ERR_INVALID_ARGUMENT.
 * Errors of every collective: COMM_ERR_INVALID_ARGUMENT (comm or a tensor
 * the call reads NULL, dtypes that differ, sizes or rows as described
 * wrong, a root out of range, in and out overlapping other than in place),
 * COMM_ERR_INVALID_USAGE (a destroyed comm or tensor), communication
 * failures; each call names the errors of its own beyond those.
 */

/** Every rank waits until all have entered. Errors: those of every collective. */
COMM_API comm_status_t comm_barrier(comm_t *comm, comm_handle_t **handle);

/**
 * out = op(in of every rank). `out` may be `in` (in place); same element count.
 * Errors: those of every collective, and COMM_ERR_INVALID_ARGUMENT for an op
 * not defined for the dtype.
 */
COMM_API comm_status_t comm_all_reduce(comm_t *comm, const comm_tensor_t *in, comm_tensor_t *out,
                                       comm_op_t op, comm_handle_t **handle);

/**
 * Like all_reduce, but only `root` gets the result; `out` may be NULL elsewhere.
 * Errors: as comm_all_reduce's.
 */
COMM_API comm_status_t comm_reduce(comm_t *comm, const comm_tensor_t *in, comm_tensor_t *out,
                                   comm_op_t op, int root, comm_handle_t **handle);

/**
 * Copy `in` of `root` into `out` of every rank. `in` is read on the root only
 * (may be NULL elsewhere); on the root `out` may be `in` or NULL; same
 * element count. Errors: those of every collective.
 */
COMM_API comm_status_t comm_broadcast(comm_t *comm, const comm_tensor_t *in, comm_tensor_t *out,
                                      int root, comm_handle_t **handle);

/**
 * Concatenate `in` of every rank along dim 0 into `out` (size x in's rows, in
 * rank order; out's other dims equal in's). In place: `in` may describe
 * rank's own slot inside `out`. Errors: those of every collective.
 */
COMM_API comm_status_t comm_all_gather(comm_t *comm, const comm_tensor_t *in, comm_tensor_t *out,
                                       comm_handle_t **handle);

/**
 * Reduce `in` (size x out's rows; in's other dims equal out's) over every
 * rank with `op`, and give rank r the r-th of `size` equal dim-0 blocks in
 * `out`. In place: `out` may describe rank's own block inside `in`.
 * Errors: as comm_all_reduce's.
 */
COMM_API comm_status_t comm_reduce_scatter(comm_t *comm, const comm_tensor_t *in,
                                           comm_tensor_t *out, comm_op_t op,
                                           comm_handle_t **handle);

/**
 * Concatenate `in` of every rank along dim 0 into `out` on `root` (NULL
 * elsewhere), as all_gather does: size x in's rows.
 * Errors: those of every collective.
 */
COMM_API comm_status_t comm_gather(comm_t *comm, const comm_tensor_t *in, comm_tensor_t *out,
                                   int root, comm_handle_t **handle);

/**
 * Split `in` on `root` (NULL elsewhere; size x out's rows) into size equal
 * dim-0 blocks; rank r gets block r in `out`.
 * Errors: those of every collective.
 */
COMM_API comm_status_t comm_scatter(comm_t *comm, const comm_tensor_t *in, comm_tensor_t *out,
                                    int root, comm_handle_t **handle);

/**
 * Rank r sends rows [sum(in_splits[0..p)), +in_splits[p]) of `in` to rank p
 * and receives from p into rows [sum(out_splits[0..p)), +out_splits[p]) of
 * `out`. Splits are arrays of `size` row counts; NULL means "dim 0 divided
 * evenly by size" (an error when it does not divide). Rows of `in` and
 * `out` have the same shape; they may not overlap.
 * Errors: those of every collective, and COMM_ERR_INVALID_ARGUMENT for a
 * negative split or splits that do not add up to dim 0. Splits that
 * disagree between ranks are COMM_ERR_MISMATCH.
 */
COMM_API comm_status_t comm_all_to_all_single(comm_t *comm, const comm_tensor_t *in,
                                              comm_tensor_t *out, const int64_t *out_splits,
                                              const int64_t *in_splits, comm_handle_t **handle);

/**
 * Rank r sends ins[p] to rank p and receives outs[p] from rank p; both
 * arrays hold `size` tensors of any shape (the byte sizes of a pair must
 * agree), all of one dtype.
 * Errors: those of every collective, and COMM_ERR_INVALID_ARGUMENT for
 * nins or nouts other than the size, or ins[rank] and outs[rank] of
 * different byte sizes. Pairs that disagree between ranks are
 * COMM_ERR_MISMATCH.
 */
COMM_API comm_status_t comm_all_to_all(comm_t *comm, int nins, const comm_tensor_t *const *ins,
                                       int nouts, comm_tensor_t *const *outs,
                                       comm_handle_t **handle);

/**
 * Uneven all_gather: rank r contributes counts[r] rows (`counts` holds `size`
 * row counts, the same on every rank): `in` has counts[rank] rows and `out`
 * sum(counts) rows.
 * Errors: those of every collective, and COMM_ERR_INVALID_ARGUMENT for
 * counts NULL or a negative count.
 */
COMM_API comm_status_t comm_all_gather_v(comm_t *comm, const comm_tensor_t *in, comm_tensor_t *out,
                                         const int64_t *counts, comm_handle_t **handle);

/**
 * Uneven reduce_scatter: `in` has sum(counts) rows; rank r gets counts[r]
 * rows in `out`. Errors: as comm_all_gather_v's, and COMM_ERR_INVALID_ARGUMENT
 * for an op not defined for the dtype.
 */
COMM_API comm_status_t comm_reduce_scatter_v(comm_t *comm, const comm_tensor_t *in,
                                             comm_tensor_t *out, const int64_t *counts,
                                             comm_op_t op, comm_handle_t **handle);

/**
 * Uneven gather: rank r contributes counts[r] rows (its `in`) to `out`
 * (sum(counts) rows) on `root`. Errors: as comm_all_gather_v's.
 */
COMM_API comm_status_t comm_gather_v(comm_t *comm, const comm_tensor_t *in, comm_tensor_t *out,
                                     const int64_t *counts, int root, comm_handle_t **handle);

/**
 * Uneven scatter: rank r receives counts[r] rows (its `out`) of `in`
 * (sum(counts) rows) on `root`. Errors: as comm_all_gather_v's.
 */
COMM_API comm_status_t comm_scatter_v(comm_t *comm, const comm_tensor_t *in, comm_tensor_t *out,
                                      const int64_t *counts, int root, comm_handle_t **handle);

#ifdef __cplusplus
}
#endif

#endif /* COMM_H */
