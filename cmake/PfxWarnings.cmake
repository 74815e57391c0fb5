# Strict warnings for our own targets; -Werror when PFX_WERROR is on (CI).
function(pfx_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers>
    # GCC 12 reports -Wrestrict inside libstdc++'s std::string operator+ when inlined
    # (GCC bug 105329, a false positive); it is not about our code.
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict>)
  if(PFX_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
