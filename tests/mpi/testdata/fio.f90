! A Fortran MPI-IO workload for the iopred tests (use mpi bindings).
! usage: fio PATH COUNT
! Each rank writes COUNT records of 8 double precision values (64 bytes):
!   record k of rank r with MPI_FILE_WRITE_AT at byte (k*nprocs + r)*64,
! then, after MPI_FILE_SEEK to the same place, COUNT more with
! MPI_FILE_WRITE_ALL through a view with displacement nprocs*COUNT*64 +
! r*64*COUNT (contiguous per rank), then reads its first record back
! with MPI_FILE_READ_AT and one MPI_FILE_IWRITE_AT completed by MPI_WAIT.
program fio
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, fh, k, count, req
  integer(kind=MPI_OFFSET_KIND) :: off, disp
  integer :: status(MPI_STATUS_SIZE)
  double precision :: buf(8), back(8)
  character(len=4096) :: path
  character(len=32) :: arg

  call get_command_argument(1, path)
  call get_command_argument(2, arg)
  read (arg, *) count
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  do k = 0, count - 1
    buf = dble(rank * 1000 + k)
    off = int(k * nprocs + rank, MPI_OFFSET_KIND) * 64
    call MPI_FILE_WRITE_AT(fh, off, buf, 8, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
  end do
  disp = int(nprocs * count + rank * count, MPI_OFFSET_KIND) * 64
  call MPI_FILE_SET_VIEW(fh, disp, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  off = 0
  call MPI_FILE_SEEK(fh, off, MPI_SEEK_SET, ierr)
  do k = 0, count - 1
    buf = dble(-k)
    call MPI_FILE_WRITE_ALL(fh, buf, 8, MPI_DOUBLE_PRECISION, status, ierr)
  end do
  call MPI_FILE_SET_VIEW(fh, 0_MPI_OFFSET_KIND, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  off = int(rank, MPI_OFFSET_KIND) * 64
  call MPI_FILE_READ_AT(fh, off, back, 8, MPI_DOUBLE_PRECISION, status, ierr)
  if (back(1) /= dble(rank * 1000)) call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
  off = int(2 * nprocs * count + rank, MPI_OFFSET_KIND) * 64
  call MPI_FILE_IWRITE_AT(fh, off, buf, 8, MPI_DOUBLE_PRECISION, req, ierr)
  call MPI_WAIT(req, status, ierr)
  call MPI_FILE_CLOSE(fh, ierr)
  call MPI_FINALIZE(ierr)
end program fio
