# The diagrams' tests: the layout functions against the PTX ISA tables, gg_layouts' exit codes,
# and the images the READMEs show. include()d from tests/CMakeLists.txt.
add_executable(test_layouts test_layouts.c suite_layouts.c)
target_link_libraries(test_layouts PRIVATE ggcommon PkgConfig::CHECK)
add_test(NAME cpu_layouts COMMAND test_layouts)
foreach(args "ring;3;8" "swizzle" "wgmma;64" "tiles;1024;16;1.2" "kernel;k3_wgmma")
  string(REPLACE ";" "_" name "${args}")
  add_test(NAME layouts_${name} COMMAND ${CMAKE_COMMAND} -DEXPECT=0 -P
           ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake -- $<TARGET_FILE:gg_layouts> ${args})
endforeach()
add_test(NAME layouts_bad_usage COMMAND ${CMAKE_COMMAND} -DEXPECT=2 -P
         ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake -- $<TARGET_FILE:gg_layouts> wgmma 12)
add_test(NAME readme_images COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/readme_images.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(cpu_layouts layouts_ring_3_8 layouts_swizzle layouts_wgmma_64 layouts_tiles_1024_16_1.2
                     layouts_kernel_k3_wgmma layouts_bad_usage readme_images PROPERTIES LABELS cpu)
