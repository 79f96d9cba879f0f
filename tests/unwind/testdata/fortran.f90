! gfortran -O2 frames: recursion, automatic arrays (a frame pointer
! frame), module procedures and a formatted internal write, all calling
! the C harness at the leaf; and formatted and unformatted writes to
! files, which reach the harness's write() through libgfortran's frames.
module walkers
  use iso_c_binding
  implicit none
  interface
    integer(c_int) function ext_check(max) bind(C, name="ext_check")
      import :: c_int
      integer(c_int), value :: max
    end function
  end interface
  integer :: total = 0
contains
  recursive integer function walk(n) result(r)
    integer, intent(in) :: n
    if (n == 0) then
      r = ext_check(64_c_int)
    else
      r = walk(n - 1)
      total = total + r + n
    end if
  end function

  recursive subroutine automatic(n)
    integer, intent(in) :: n
    real(8) :: a(n + 3)
    a = real(n, 8)
    if (n == 0) then
      total = total + ext_check(64_c_int)
    else
      call automatic(n - 1)
    end if
    total = total + int(sum(a))
  end subroutine

  recursive subroutine file_io(n, unit)
    integer, intent(in) :: n, unit
    real(8) :: values(64)
    if (n > 0) then
      call file_io(n - 1, unit)
      return
    end if
    values = 1.5d0
    write (unit) values
    flush (unit)
  end subroutine

  subroutine formatted(n)
    integer, intent(in) :: n
    character(len=32) :: line
    write (line, '(i8)') walk(n)
    total = total + len_trim(line)
  end subroutine
end module

program fortran_stack
  use walkers
  implicit none
  interface
    subroutine ext_init() bind(C, name="ext_init")
    end subroutine
    integer(c_int) function ext_report(name) bind(C, name="ext_report")
      import :: c_int, c_char
      character(kind=c_char), dimension(*) :: name
    end function
  end interface
  integer :: i, text, binary
  call ext_init()
  do i = 0, 40, 5
    total = total + walk(i)
    call automatic(i)
    call formatted(i)
  end do
  open (newunit=text, status='scratch', form='formatted')
  open (newunit=binary, status='scratch', form='unformatted', access='stream')
  do i = 1, 20
    write (text, '(a,i6,f12.4)') 'step ', i, real(i, 8) / 3
    flush (text)
    call file_io(mod(i, 7), binary)
  end do
  close (text)
  close (binary)
  call exit(ext_report("fortran" // c_null_char))
end program
