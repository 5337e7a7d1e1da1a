# k3 tests, included from tests/CMakeLists.txt after gg_sass_test is defined.
# k3_tcgen05 carries a cubin for sm_100a (B200) and one for sm_103a (B300): check each alone.
foreach(arch sm_100a sm_103a)
  add_test(NAME sass_k3_tcgen05_${arch}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sass_check.sh --arch ${arch} "${GG_CUOBJDUMP}"
                   $<TARGET_FILE:k3_tcgen05> UTCHMMA.2CTA UTCBAR LDTM UTMALDG)
  set_tests_properties(sass_k3_tcgen05_${arch} PROPERTIES LABELS "cpu;sass" SKIP_RETURN_CODE 77)
endforeach()
