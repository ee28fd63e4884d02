// Whether this build runs under AddressSanitizer: JOURNEY_TEST_ASAN is 1 or 0. g++ says so with
// __SANITIZE_ADDRESS__, clang (before 17) only through __has_feature.
#pragma once
#if defined(__SANITIZE_ADDRESS__)
#define JOURNEY_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JOURNEY_TEST_ASAN 1
#endif
#endif
#ifndef JOURNEY_TEST_ASAN
#define JOURNEY_TEST_ASAN 0
#endif
