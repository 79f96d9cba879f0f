! gfortran -O2 frames: recursion, automatic arrays (a frame pointer
! frame), module procedures and a formatted internal write, all calling
! the C harness at the leaf.
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
  integer :: i
  call ext_init()
  do i = 0, 40, 5
    total = total + walk(i)
    call automatic(i)
    call formatted(i)
  end do
  call exit(ext_report("fortran" // c_null_char))
end program
