/*
 * ref_rename.h: force-included in every source of tests/c/ref_sim, the sim
 * as committed before the scalable pool model (its pool part corrected
 * where the GPU showed it wrong: docs/calibration.md E12), so that it
 * links beside src/sim in test_sim_diff without symbol clashes.
 */
#ifndef POOLSH_REF_RENAME_H
#define POOLSH_REF_RENAME_H
#define ps_backend_sim ps_backend_sim_ref
#define sim_device_reserved ref_sim_device_reserved
#define sim_device_sync ref_sim_device_sync
#define sim_device_total ref_sim_device_total
#define sim_enqueue ref_sim_enqueue
#define sim_event_create ref_sim_event_create
#define sim_event_destroy ref_sim_event_destroy
#define sim_event_elapsed ref_sim_event_elapsed
#define sim_event_query ref_sim_event_query
#define sim_event_record ref_sim_event_record
#define sim_event_sync ref_sim_event_sync
#define sim_event_valid ref_sim_event_valid
#define sim_host_advance ref_sim_host_advance
#define sim_host_cost ref_sim_host_cost
#define sim_host_knows ref_sim_host_knows
#define sim_mem_copy ref_sim_mem_copy
#define sim_mem_fill ref_sim_mem_fill
#define sim_mem_find ref_sim_mem_find
#define sim_mem_hole ref_sim_mem_hole
#define sim_mem_free_all ref_sim_mem_free_all
#define sim_mem_map ref_sim_mem_map
#define sim_mem_materialized ref_sim_mem_materialized
#define sim_mem_range ref_sim_mem_range
#define sim_mem_read ref_sim_mem_read
#define sim_mem_reserve ref_sim_mem_reserve
#define sim_mem_resize ref_sim_mem_resize
#define sim_mem_unmap ref_sim_mem_unmap
#define sim_mem_verify ref_sim_mem_verify
#define sim_mem_write ref_sim_mem_write
#define sim_now ref_sim_now
#define sim_pool_alloc ref_sim_pool_alloc
#define sim_pool_create ref_sim_pool_create
#define sim_pool_default ref_sim_pool_default
#define sim_pool_destroy ref_sim_pool_destroy
#define sim_pool_free ref_sim_pool_free
#define sim_pool_get ref_sim_pool_get
#define sim_pool_set ref_sim_pool_set
#define sim_pool_trim ref_sim_pool_trim
#define sim_pools_free ref_sim_pools_free
#define sim_pools_init ref_sim_pools_init
#define sim_pools_release ref_sim_pools_release
#define sim_profile_defaults ref_sim_profile_defaults
#define sim_profile_get ref_sim_profile_get
#define sim_profile_names ref_sim_profile_names
#define sim_profile_set ref_sim_profile_set
#define sim_push_op ref_sim_push_op
#define sim_reserve_one ref_sim_reserve_one
#define sim_sleep ref_sim_sleep
#define sim_stream_create ref_sim_stream_create
#define sim_stream_destroy ref_sim_stream_destroy
#define sim_stream_done_time ref_sim_stream_done_time
#define sim_stream_priority_range ref_sim_stream_priority_range
#define sim_stream_query ref_sim_stream_query
#define sim_stream_resolve ref_sim_stream_resolve
#define sim_stream_sync ref_sim_stream_sync
#define sim_stream_wait ref_sim_stream_wait
#define sim_streams_free ref_sim_streams_free
#define sim_sync_device ref_sim_sync_device
#define sim_sync_stream ref_sim_sync_stream
#define sim_vc_copy ref_sim_vc_copy
#define sim_vc_free ref_sim_vc_free
#define sim_vc_get ref_sim_vc_get
#define sim_vc_merge ref_sim_vc_merge
#define sim_vc_raise ref_sim_vc_raise
#define sim_wait_check ref_sim_wait_check
#endif
