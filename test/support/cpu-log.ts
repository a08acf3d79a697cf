/** Where the server-starting files' CPU is written, one JSON line a file: the reporter sets it before any worker starts. */
export const CPU_LOG_VARIABLE = 'INFERLAB_TEST_CPU_LOG';
