// Marks the public API. The library is compiled with hidden visibility, so that a shared
// libconvgrad exports exactly what include/convgrad/ declares and nothing of its internals.
#pragma once

#define CONVGRAD_API __attribute__((visibility("default")))
