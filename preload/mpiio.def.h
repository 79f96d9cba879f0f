/* The interposed MPI-IO functions: one line each, MPI_CALL(name, ...).
 * The first argument names the function; the rest is the shape the MPI-IO
 * wrappers (mpiio.c) expand. iop.h and core.c expand only the name, to give
 * every function an operation code and its name in the trace.
 *
 * MPI_CALL(name, shape, stem)
 *   shape: the parameter list and what is recorded (see mpiio.c):
 *     AT/FP/SH     blocking data at an explicit offset, at the individual
 *                  file pointer, at the shared file pointer
 *     IAT/IFP/ISH  their nonblocking forms (a request to complete)
 *     BAT/BFP/BSH  split-collective begin; END its end
 *     OPEN CLOSE DELETE SIZE SYNC SEEK SEEKSH VIEW  file calls
 *     WAIT TEST WAITALL TESTALL WAITANY TESTANY WAITSOME TESTSOME  completions
 *     REQFREE      MPI_Request_free: forgets a request of ours, records nothing
 *     INIT INITT FINI  start and end of MPI
 *   stem: the Fortran name without its mpi_ prefix and trailing underscore
 *     (file_write_at gives mpi_file_write_at_ and Open MPI's
 *     ompi_file_write_at_f). */

/* ---- data at an explicit offset ---- */
MPI_CALL(MPI_File_read_at, AT, file_read_at)
MPI_CALL(MPI_File_write_at, AT, file_write_at)
MPI_CALL(MPI_File_read_at_all, AT, file_read_at_all)
MPI_CALL(MPI_File_write_at_all, AT, file_write_at_all)
/* ---- data at the individual file pointer ---- */
MPI_CALL(MPI_File_read, FP, file_read)
MPI_CALL(MPI_File_write, FP, file_write)
MPI_CALL(MPI_File_read_all, FP, file_read_all)
MPI_CALL(MPI_File_write_all, FP, file_write_all)
/* ---- data at the shared file pointer ---- */
MPI_CALL(MPI_File_read_shared, SH, file_read_shared)
MPI_CALL(MPI_File_write_shared, SH, file_write_shared)
MPI_CALL(MPI_File_read_ordered, SH, file_read_ordered)
MPI_CALL(MPI_File_write_ordered, SH, file_write_ordered)
/* ---- nonblocking ---- */
MPI_CALL(MPI_File_iread_at, IAT, file_iread_at)
MPI_CALL(MPI_File_iwrite_at, IAT, file_iwrite_at)
MPI_CALL(MPI_File_iread_at_all, IAT, file_iread_at_all)
MPI_CALL(MPI_File_iwrite_at_all, IAT, file_iwrite_at_all)
MPI_CALL(MPI_File_iread, IFP, file_iread)
MPI_CALL(MPI_File_iwrite, IFP, file_iwrite)
MPI_CALL(MPI_File_iread_all, IFP, file_iread_all)
MPI_CALL(MPI_File_iwrite_all, IFP, file_iwrite_all)
MPI_CALL(MPI_File_iread_shared, ISH, file_iread_shared)
MPI_CALL(MPI_File_iwrite_shared, ISH, file_iwrite_shared)
/* ---- split collectives ---- */
MPI_CALL(MPI_File_read_at_all_begin, BAT, file_read_at_all_begin)
MPI_CALL(MPI_File_write_at_all_begin, BAT, file_write_at_all_begin)
MPI_CALL(MPI_File_read_all_begin, BFP, file_read_all_begin)
MPI_CALL(MPI_File_write_all_begin, BFP, file_write_all_begin)
MPI_CALL(MPI_File_read_ordered_begin, BSH, file_read_ordered_begin)
MPI_CALL(MPI_File_write_ordered_begin, BSH, file_write_ordered_begin)
MPI_CALL(MPI_File_read_at_all_end, END, file_read_at_all_end)
MPI_CALL(MPI_File_write_at_all_end, END, file_write_at_all_end)
MPI_CALL(MPI_File_read_all_end, END, file_read_all_end)
MPI_CALL(MPI_File_write_all_end, END, file_write_all_end)
MPI_CALL(MPI_File_read_ordered_end, END, file_read_ordered_end)
MPI_CALL(MPI_File_write_ordered_end, END, file_write_ordered_end)
/* ---- files ---- */
MPI_CALL(MPI_File_open, OPEN, file_open)
MPI_CALL(MPI_File_close, CLOSE, file_close)
MPI_CALL(MPI_File_delete, DELETE, file_delete)
MPI_CALL(MPI_File_set_size, SIZE, file_set_size)
MPI_CALL(MPI_File_preallocate, SIZE, file_preallocate)
MPI_CALL(MPI_File_sync, SYNC, file_sync)
MPI_CALL(MPI_File_seek, SEEK, file_seek)
MPI_CALL(MPI_File_seek_shared, SEEKSH, file_seek_shared)
MPI_CALL(MPI_File_set_view, VIEW, file_set_view)
/* ---- completions of nonblocking requests ---- */
MPI_CALL(MPI_Wait, WAIT, wait)
MPI_CALL(MPI_Test, TEST, test)
MPI_CALL(MPI_Waitall, WAITALL, waitall)
MPI_CALL(MPI_Testall, TESTALL, testall)
MPI_CALL(MPI_Waitany, WAITANY, waitany)
MPI_CALL(MPI_Testany, TESTANY, testany)
MPI_CALL(MPI_Waitsome, WAITSOME, waitsome)
MPI_CALL(MPI_Testsome, TESTSOME, testsome)
MPI_CALL(MPI_Request_free, REQFREE, request_free)
/* ---- MPI itself ---- */
MPI_CALL(MPI_Init, INIT, init)
MPI_CALL(MPI_Init_thread, INITT, init_thread)
MPI_CALL(MPI_Finalize, FINI, finalize)
