# `cmake --install`: headers, the library, the CLI, a CMake package (convgrad::convgrad) and a
# pkg-config file.
include(CMakePackageConfigHelpers)

set(CONVGRAD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/convgrad)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/convgrad DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/convgrad/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/convgrad)

install(TARGETS convgrad EXPORT convgradTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET convgrad_tool)
  install(TARGETS convgrad_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT convgradTargets NAMESPACE convgrad:: DESTINATION ${CONVGRAD_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/convgradConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/convgradConfig.cmake
                              INSTALL_DESTINATION ${CONVGRAD_CMAKE_DIR})
# 0.x: a minor version may break the API, so only the same MAJOR.MINOR is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/convgradConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/convgradConfig.cmake ${PROJECT_BINARY_DIR}/convgradConfigVersion.cmake
        DESTINATION ${CONVGRAD_CMAKE_DIR})

# pkg-config: a static libconvgrad needs OpenMP and the C++ runtime on the consumer's link
# line, so `pkg-config --libs convgrad` gives them; a shared one carries them itself.
if(BUILD_SHARED_LIBS)
  set(CONVGRAD_PC_LIBS "-lconvgrad")
  set(CONVGRAD_PC_LIBS_PRIVATE "${OpenMP_CXX_FLAGS}")
else()
  set(CONVGRAD_PC_LIBS "-lconvgrad ${OpenMP_CXX_FLAGS} -lstdc++ -lm")
  set(CONVGRAD_PC_LIBS_PRIVATE "")
endif()
# Relocatable: the prefix is found from where the .pc file lies, so `cmake --install --prefix`
# anywhere gives a working file.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(CONVGRAD_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH rel "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
  set(CONVGRAD_PC_PREFIX "\${pcfiledir}/${rel}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/convgrad.pc.in ${PROJECT_BINARY_DIR}/convgrad.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/convgrad.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
