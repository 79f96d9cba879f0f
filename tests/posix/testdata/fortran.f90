! Writes a file unformatted and another formatted, then reads both back.
program fio
  implicit none
  integer :: i
  real(8) :: x(256)
  character(len=4096) :: dir
  call get_command_argument(1, dir)
  x = 1.5d0
  open(10, file=trim(dir)//'/unformatted.bin', form='unformatted', access='stream', status='replace')
  do i = 1, 50
    write(10) x
  end do
  close(10)
  open(11, file=trim(dir)//'/formatted.txt', form='formatted', status='replace')
  do i = 1, 50
    write(11, '(8F10.3)') x(1:8)
  end do
  close(11)
  open(10, file=trim(dir)//'/unformatted.bin', form='unformatted', access='stream', status='old')
  do i = 1, 50
    read(10) x
  end do
  close(10)
  print '(A,F6.2)', 'sum ', sum(x)
end program fio
