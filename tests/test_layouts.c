/* The layout suite on its own (CTest label `cpu`), until it joins test_cpu's runner. */
#include <check.h>
#include <stdlib.h>

Suite *layouts_suite(void);

int main(void) {
    SRunner *r = srunner_create(layouts_suite());
    srunner_run_all(r, CK_NORMAL);
    const int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
