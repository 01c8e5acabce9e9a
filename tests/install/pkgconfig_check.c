/* pkgconfig_check: built with `cc $(pkg-config --cflags --libs tric)` (or tric-runtime) against
 * the installed prefix; opens the cpu device through the library. */
#include <tric/tric.h>

#include <stdio.h>

int main(void)
{
    tric_device dev;
    if (tric_device_open("cpu", &dev) != TRIC_SUCCESS) {
        fprintf(stderr, "pkgconfig_check: %s\n", tric_last_error());
        return 1;
    }
    printf("pkgconfig_check: %s, tric %s\n", tric_device_name(dev), TRIC_VERSION);
    tric_device_close(dev);
    return 0;
}
