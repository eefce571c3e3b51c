// expect: 3:1: #error this configuration is not supported
#if 1
#error this configuration is not supported
#endif
