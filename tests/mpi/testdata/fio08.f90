! The mpi_f08 bindings' path to MPI-IO, for the iopred tests.
! usage: fio08 PATH COUNT
! Each rank writes COUNT records of 8 double precision values (64 bytes),
! record k of rank r with MPI_File_write_at at byte (k*nprocs + r)*64, then
! one MPI_File_iwrite_at at (COUNT*nprocs + r)*64 completed by MPI_Wait.
program fio08
  use mpi_f08
  implicit none
  type(MPI_File) :: fh
  type(MPI_Request) :: req
  integer :: rank, nprocs, k, count
  integer(kind=MPI_OFFSET_KIND) :: off
  double precision :: buf(8)
  character(len=4096) :: path
  character(len=32) :: arg

  call get_command_argument(1, path)
  call get_command_argument(2, arg)
  read (arg, *) count
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh)
  do k = 0, count - 1
    buf = dble(rank * 1000 + k)
    off = int(k * nprocs + rank, MPI_OFFSET_KIND) * 64
    call MPI_File_write_at(fh, off, buf, 8, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE)
  end do
  off = int(count * nprocs + rank, MPI_OFFSET_KIND) * 64
  call MPI_File_iwrite_at(fh, off, buf, 8, MPI_DOUBLE_PRECISION, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call MPI_File_close(fh)
  call MPI_Finalize()
end program fio08
