/* The table of bad calls: CASE(name, call named in the message, status, a
 * word of the cause, expression). Included twice by bad_arguments_test.c. */
CASE(init_null_out, "comm_init", COMM_ERR_INVALID_ARGUMENT, "out", comm_init(NULL, NULL))
CASE(init_algo_unknown_collective, "comm_init", COMM_ERR_INVALID_ARGUMENT, "allreduce",
     init_with("algo", "allreduce:ring"))
CASE(init_algo_without_colon, "comm_init", COMM_ERR_INVALID_ARGUMENT, "collective:algorithm", init_with("algo", "ring"))
CASE(init_algo_unknown_algorithm, "comm_init", COMM_ERR_INVALID_ARGUMENT, "no_such_algorithm",
     init_with("algo", "all_reduce:no_such_algorithm"))
CASE(init_cuda_ipc_not_a_switch, "comm_init", COMM_ERR_INVALID_ARGUMENT, "COMM_CUDA_IPC", init_with("cuda_ipc", "yes"))
CASE(rank_null_out, "comm_rank", COMM_ERR_INVALID_ARGUMENT, "out", comm_rank(NULL, world))
CASE(rank_null_comm, "comm_rank", COMM_ERR_INVALID_ARGUMENT, "comm", comm_rank(&(int){0}, NULL))
CASE(size_null_comm, "comm_size", COMM_ERR_INVALID_ARGUMENT, "comm", comm_size(&(int){0}, NULL))
CASE(local_rank_null, "comm_local_rank", COMM_ERR_INVALID_ARGUMENT, "out", comm_local_rank(NULL, world))
CASE(local_size_null, "comm_local_size", COMM_ERR_INVALID_ARGUMENT, "out", comm_local_size(NULL, world))
CASE(node_count_null, "comm_node_count", COMM_ERR_INVALID_ARGUMENT, "out", comm_node_count(NULL, world))
CASE(node_count_null_comm, "comm_node_count", COMM_ERR_INVALID_ARGUMENT, "comm", comm_node_count(&(int){0}, NULL))
CASE(node_id_null, "comm_node_id", COMM_ERR_INVALID_ARGUMENT, "out", comm_node_id(NULL, world))
CASE(node_id_null_comm, "comm_node_id", COMM_ERR_INVALID_ARGUMENT, "comm", comm_node_id(&(int){0}, NULL))
CASE(name_null, "comm_name", COMM_ERR_INVALID_ARGUMENT, "out", comm_name(NULL, world))
CASE(abort_null, "comm_abort", COMM_ERR_INVALID_ARGUMENT, "comm", comm_abort(NULL))
CASE(revoke_null, "comm_revoke", COMM_ERR_INVALID_ARGUMENT, "comm", comm_revoke(NULL))
CASE(timeout_zero, "comm_set_timeout", COMM_ERR_INVALID_ARGUMENT, "positive", comm_set_timeout(world, 0))
CASE(timeout_null, "comm_timeout", COMM_ERR_INVALID_ARGUMENT, "out_ms", comm_timeout(NULL, world))
CASE(set_stream_null_comm, "comm_set_stream", COMM_ERR_INVALID_ARGUMENT, "comm", comm_set_stream(NULL, NULL))
CASE(stream_null_out, "comm_stream", COMM_ERR_INVALID_ARGUMENT, "out", comm_stream(NULL, world))
CASE(stream_null_comm, "comm_stream", COMM_ERR_INVALID_ARGUMENT, "comm", comm_stream(&(void *){NULL}, NULL))
CASE(cuda_device_count_null, "comm_cuda_device_count", COMM_ERR_INVALID_ARGUMENT, "out_count",
     comm_cuda_device_count(NULL, NULL))
CASE(failed_rank_null_out, "comm_failed_rank", COMM_ERR_INVALID_ARGUMENT, "out", comm_failed_rank(NULL, world))
CASE(failed_rank_null_comm, "comm_failed_rank", COMM_ERR_INVALID_ARGUMENT, "comm", comm_failed_rank(&(int){0}, NULL))
CASE(config_create_null, "comm_config_create", COMM_ERR_INVALID_ARGUMENT, "out", comm_config_create(NULL))
CASE(config_set_null, "comm_config_set", COMM_ERR_INVALID_ARGUMENT, "config", comm_config_set(NULL, "rank", "0"))
CASE(setting_count_null, "comm_setting_count", COMM_ERR_INVALID_ARGUMENT, "out", comm_setting_count(NULL))
CASE(setting_info_null_key, "comm_setting_info", COMM_ERR_INVALID_ARGUMENT, "out_key",
     comm_setting_info(NULL, NULL, NULL, NULL, 0))
CASE(setting_info_range, "comm_setting_info", COMM_ERR_INVALID_ARGUMENT, "index",
     comm_setting_info(&(const char *){NULL}, NULL, NULL, NULL, -1))
CASE(config_destroy_foreign, "comm_config_destroy", COMM_ERR_INVALID_USAGE, "never created",
     comm_config_destroy((comm_config_t *)fdata))
CASE(tensor_null_out, "comm_tensor_create", COMM_ERR_INVALID_ARGUMENT, "out",
     comm_tensor_create(NULL, fdata, COMM_FLOAT32, 0, NULL))
CASE(tensor_bad_dtype, "comm_tensor_create", COMM_ERR_INVALID_ARGUMENT, "dtype",
     comm_tensor_create(&(comm_tensor_t *){NULL}, fdata, (comm_dtype_t)42, 0, NULL))
CASE(tensor_ndim_9, "comm_tensor_create", COMM_ERR_INVALID_ARGUMENT, "ndim",
     comm_tensor_create(&(comm_tensor_t *){NULL}, fdata, COMM_FLOAT32, 9, counts1))
CASE(tensor_negative_dim, "comm_tensor_create", COMM_ERR_INVALID_ARGUMENT, "negative",
     comm_tensor_create(&(comm_tensor_t *){NULL}, fdata, COMM_FLOAT32, 1, negative_counts))
CASE(tensor_null_shape, "comm_tensor_create", COMM_ERR_INVALID_ARGUMENT, "shape",
     comm_tensor_create(&(comm_tensor_t *){NULL}, fdata, COMM_FLOAT32, 1, NULL))
CASE(tensor_null_data, "comm_tensor_create", COMM_ERR_INVALID_ARGUMENT, "NULL",
     comm_tensor_create(&(comm_tensor_t *){NULL}, NULL, COMM_FLOAT32, 1, counts1))
CASE(tensor_dim_range, "comm_tensor_dim", COMM_ERR_INVALID_ARGUMENT, "dim", comm_tensor_dim(&(int64_t){0}, f32x4, 1))
CASE(tensor_numel_null, "comm_tensor_numel", COMM_ERR_INVALID_ARGUMENT, "tensor",
     comm_tensor_numel(&(int64_t){0}, NULL))
CASE(tensor_nbytes_null, "comm_tensor_nbytes", COMM_ERR_INVALID_ARGUMENT, "out", comm_tensor_nbytes(NULL, f32x4))
CASE(tensor_data_null, "comm_tensor_data", COMM_ERR_INVALID_ARGUMENT, "out", comm_tensor_data(NULL, f32x4))
CASE(tensor_dtype_null, "comm_tensor_dtype", COMM_ERR_INVALID_ARGUMENT, "out", comm_tensor_dtype(NULL, f32x4))
CASE(tensor_ndim_null, "comm_tensor_ndim", COMM_ERR_INVALID_ARGUMENT, "out", comm_tensor_ndim(NULL, f32x4))
CASE(tensor_memory_null, "comm_tensor_memory", COMM_ERR_INVALID_ARGUMENT, "out_type",
     comm_tensor_memory(NULL, &(int){0}, f32x4))
CASE(tensor_set_data_null, "comm_tensor_set_data", COMM_ERR_INVALID_ARGUMENT, "NULL", comm_tensor_set_data(f32x4, NULL))
CASE(tensor_set_memory_bad, "comm_tensor_set_memory", COMM_ERR_INVALID_ARGUMENT, "memory type",
     comm_tensor_set_memory(f32x4, (comm_memory_type_t)7, 0))
CASE(send_null_comm, "comm_send", COMM_ERR_INVALID_ARGUMENT, "comm", comm_send(NULL, f32x4, 0, 0, NULL))
CASE(send_null_tensor, "comm_send", COMM_ERR_INVALID_ARGUMENT, "tensor", comm_send(world, NULL, 0, 0, NULL))
CASE(send_peer_range, "comm_send", COMM_ERR_INVALID_ARGUMENT, "peer", comm_send(world, f32x4, 5, 0, NULL))
CASE(send_negative_tag, "comm_send", COMM_ERR_INVALID_ARGUMENT, "tag", comm_send(world, f32x4, 0, -3, NULL))
CASE(recv_peer_range, "comm_recv", COMM_ERR_INVALID_ARGUMENT, "peer", comm_recv(world, f32x4, -1, 0, NULL))
CASE(batch_create_null, "comm_batch_create", COMM_ERR_INVALID_ARGUMENT, "out", comm_batch_create(NULL))
CASE(batch_add_null, "comm_batch_add_send", COMM_ERR_INVALID_ARGUMENT, "batch", comm_batch_add_send(NULL, f32x4, 0, 0))
CASE(batch_add_recv_null, "comm_batch_add_recv", COMM_ERR_INVALID_ARGUMENT, "batch",
     comm_batch_add_recv(NULL, f32x4, 0, 0))
CASE(batch_start_null, "comm_batch_start", COMM_ERR_INVALID_ARGUMENT, "batch", comm_batch_start(world, NULL, NULL))
CASE(handle_wait_null, "comm_handle_wait", COMM_ERR_INVALID_ARGUMENT, "handle", comm_handle_wait(NULL, 0))
CASE(handle_test_null, "comm_handle_test", COMM_ERR_INVALID_ARGUMENT, "handle", comm_handle_test(NULL))
CASE(handle_destroy_foreign, "comm_handle_destroy", COMM_ERR_INVALID_USAGE, "never created",
     comm_handle_destroy((comm_handle_t *)fdata))
CASE(barrier_null, "comm_barrier", COMM_ERR_INVALID_ARGUMENT, "comm", comm_barrier(NULL, NULL))
CASE(all_reduce_null_in, "comm_all_reduce", COMM_ERR_INVALID_ARGUMENT, "in",
     comm_all_reduce(world, NULL, f32x4, COMM_OP_SUM, NULL))
CASE(all_reduce_size, "comm_all_reduce", COMM_ERR_INVALID_ARGUMENT, "elements",
     comm_all_reduce(world, f32x4, f32x3, COMM_OP_SUM, NULL))
CASE(all_reduce_dtype, "comm_all_reduce", COMM_ERR_INVALID_ARGUMENT, "int32",
     comm_all_reduce(world, f32x4, i32x4, COMM_OP_SUM, NULL))
CASE(all_reduce_bad_op, "comm_all_reduce", COMM_ERR_INVALID_ARGUMENT, "op",
     comm_all_reduce(world, f32x4, f32x4, (comm_op_t)77, NULL))
CASE(all_reduce_bxor_float, "comm_all_reduce", COMM_ERR_INVALID_ARGUMENT, "bxor",
     comm_all_reduce(world, f32x4, f32x4, COMM_OP_BXOR, NULL))
CASE(all_reduce_overlap, "comm_all_reduce", COMM_ERR_INVALID_ARGUMENT, "overlap",
     comm_all_reduce(world, f32x4, f32x4_shifted, COMM_OP_SUM, NULL))
CASE(reduce_root_range, "comm_reduce", COMM_ERR_INVALID_ARGUMENT, "root",
     comm_reduce(world, f32x4, f32x4, COMM_OP_SUM, 3, NULL))
CASE(reduce_null_out_on_root, "comm_reduce", COMM_ERR_INVALID_ARGUMENT, "out",
     comm_reduce(world, f32x4, NULL, COMM_OP_SUM, 0, NULL))
CASE(broadcast_root_range, "comm_broadcast", COMM_ERR_INVALID_ARGUMENT, "root",
     comm_broadcast(world, f32x4, f32x4, 1, NULL))
CASE(broadcast_null_in_on_root, "comm_broadcast", COMM_ERR_INVALID_ARGUMENT, "in",
     comm_broadcast(world, NULL, f32x4, 0, NULL))
CASE(broadcast_size, "comm_broadcast", COMM_ERR_INVALID_ARGUMENT, "elements",
     comm_broadcast(world, f32x4, f32x3, 0, NULL))
CASE(all_gather_size, "comm_all_gather", COMM_ERR_INVALID_ARGUMENT, "rows", comm_all_gather(world, f32x4, f32x8, NULL))
CASE(all_gather_null_out, "comm_all_gather", COMM_ERR_INVALID_ARGUMENT, "out",
     comm_all_gather(world, f32x4, NULL, NULL))
CASE(reduce_scatter_size, "comm_reduce_scatter", COMM_ERR_INVALID_ARGUMENT, "rows",
     comm_reduce_scatter(world, f32x8, f32x4, COMM_OP_SUM, NULL))
CASE(reduce_scatter_op, "comm_reduce_scatter", COMM_ERR_INVALID_ARGUMENT, "band",
     comm_reduce_scatter(world, f32x4, f32x4, COMM_OP_BAND, NULL))
CASE(gather_root, "comm_gather", COMM_ERR_INVALID_ARGUMENT, "root", comm_gather(world, f32x4, f32x4, -1, NULL))
CASE(gather_size, "comm_gather", COMM_ERR_INVALID_ARGUMENT, "rows", comm_gather(world, f32x4, f32x8, 0, NULL))
CASE(scatter_root, "comm_scatter", COMM_ERR_INVALID_ARGUMENT, "root", comm_scatter(world, f32x4, f32x4, 9, NULL))
CASE(scatter_null_out, "comm_scatter", COMM_ERR_INVALID_ARGUMENT, "out", comm_scatter(world, f32x4, NULL, 0, NULL))
CASE(a2a_single_splits, "comm_all_to_all_single", COMM_ERR_INVALID_ARGUMENT, "negative",
     comm_all_to_all_single(world, f32x4, g32x4, NULL, negative_counts, NULL))
CASE(a2a_single_sum, "comm_all_to_all_single", COMM_ERR_INVALID_ARGUMENT, "add up",
     comm_all_to_all_single(world, f32x4, g32x3, counts1, NULL, NULL))
CASE(a2a_list_count, "comm_all_to_all", COMM_ERR_INVALID_ARGUMENT, "nins",
     comm_all_to_all(world, 2, NULL, 1, NULL, NULL))
CASE(a2a_list_dtypes, "comm_all_to_all", COMM_ERR_INVALID_ARGUMENT, "bytes",
     comm_all_to_all(world, 1, (const comm_tensor_t *const[]){f32x4}, 1, (comm_tensor_t *const[]){f32x3}, NULL))
CASE(all_gather_v_null_counts, "comm_all_gather_v", COMM_ERR_INVALID_ARGUMENT, "counts",
     comm_all_gather_v(world, f32x4, f32x4, NULL, NULL))
CASE(all_gather_v_wrong_in, "comm_all_gather_v", COMM_ERR_INVALID_ARGUMENT, "counts[rank]",
     comm_all_gather_v(world, f32x3, f32x4, counts1, NULL))
CASE(reduce_scatter_v_negative, "comm_reduce_scatter_v", COMM_ERR_INVALID_ARGUMENT, "negative",
     comm_reduce_scatter_v(world, f32x4, f32x4, negative_counts, COMM_OP_SUM, NULL))
CASE(gather_v_root, "comm_gather_v", COMM_ERR_INVALID_ARGUMENT, "root",
     comm_gather_v(world, f32x4, f32x4, counts1, 4, NULL))
CASE(scatter_v_out, "comm_scatter_v", COMM_ERR_INVALID_ARGUMENT, "counts[rank]",
     comm_scatter_v(world, f32x4, f32x3, counts1, 0, NULL))
CASE(group_null_ranks, "comm_group_create", COMM_ERR_INVALID_ARGUMENT, "ranks",
     comm_group_create(&(comm_t *){NULL}, world, 1, NULL, NULL))
CASE(group_bad_rank, "comm_group_create", COMM_ERR_INVALID_ARGUMENT, "outside",
     comm_group_create(&(comm_t *){NULL}, world, 1, (int[]){4}, NULL))
CASE(group_zero, "comm_group_create", COMM_ERR_INVALID_ARGUMENT, "nranks",
     comm_group_create(&(comm_t *){NULL}, world, 0, (int[]){0}, NULL))
CASE(split_by_node_null_out, "comm_split_by_node", COMM_ERR_INVALID_ARGUMENT, "out",
     comm_split_by_node(NULL, world, NULL))
CASE(split_by_node_null_parent, "comm_split_by_node", COMM_ERR_INVALID_ARGUMENT, "comm",
     comm_split_by_node(&(comm_t *){NULL}, NULL, NULL))
CASE(split_color, "comm_split", COMM_ERR_INVALID_ARGUMENT, "color", comm_split(&(comm_t *){NULL}, world, -5, 0, NULL))
CASE(to_world_range, "comm_rank_to_world", COMM_ERR_INVALID_ARGUMENT, "rank", comm_rank_to_world(&(int){0}, world, 1))
CASE(from_world_range, "comm_rank_from_world", COMM_ERR_INVALID_ARGUMENT, "world_rank",
     comm_rank_from_world(&(int){0}, world, 2))
