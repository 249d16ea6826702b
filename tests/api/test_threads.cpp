// convgrad::set_num_threads / get_num_threads: the count is global (not OpenMP's per-thread
// setting), 0 restores OpenMP's default, negative counts are errors.
#include <gtest/gtest.h>
#include <omp.h>

#include <thread>

#include "convgrad/convgrad.hpp"

namespace convgrad {
namespace {

TEST(Threads, SetGetIsGlobalAndZeroRestoresTheDefault) {
    set_num_threads(3);
    EXPECT_EQ(get_num_threads(), 3);
    int seen_elsewhere = 0;
    std::thread([&] { seen_elsewhere = get_num_threads(); }).join();
    EXPECT_EQ(seen_elsewhere, 3);
    set_num_threads(0);
    EXPECT_EQ(get_num_threads(), omp_get_max_threads());
}

TEST(Threads, NegativeCountIsAnError) {
    try {
        set_num_threads(-1);
        FAIL() << "no error";
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::invalid_arguments);
        EXPECT_NE(std::string(e.what()).find("set_num_threads"), std::string::npos);
    }
    EXPECT_GE(get_num_threads(), 1);
}

TEST(Threads, CountAboveTheLimitIsAnError) {
    EXPECT_NO_THROW(set_num_threads(max_thread_count));
    EXPECT_EQ(get_num_threads(), max_thread_count);
    set_num_threads(0);
    try {
        set_num_threads(max_thread_count + 1);
        FAIL() << "no error";
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::invalid_arguments);
        EXPECT_NE(std::string(e.what()).find(std::to_string(max_thread_count)), std::string::npos) << e.what();
    }
    EXPECT_EQ(get_num_threads(), omp_get_max_threads());  // unchanged by the refused call
}

}  // namespace
}  // namespace convgrad
