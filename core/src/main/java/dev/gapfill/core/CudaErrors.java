package dev.gapfill.core;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.cuda.global.cudart;

import java.util.Set;

/** Maps CUDA runtime and driver statuses to Gapfill's typed exceptions. Internal to Gapfill. */
public final class CudaErrors {
    /** Status codes after which the context cannot be used again (same numbers in the runtime and driver APIs). */
    private static final Set<Integer> STICKY = Set.of(
            700, // illegal address
            709, // context is destroyed (another library reset the device, say): every handle and module of it is gone
            702, // launch timeout
            710, // device-side assert
            714, // hardware stack error
            715, // illegal instruction
            716, // misaligned address
            717, // invalid address space
            718, // invalid pc
            719, // launch failure
            721, // tensor memory leak ("any further CUDA work will return the same error")
            226, // contained ("the process must be terminated and relaunched")
            911, // external device ("any further CUDA work will return the same error")
            999  // unknown
    );
    private static final int OUT_OF_MEMORY = 2;

    private CudaErrors() {}

    public static boolean isSticky(int status) { return STICKY.contains(status); }

    /** Checks a CUDA runtime status. */
    public static void check(int status, String call) {
        if (status != 0) {
            throw runtimeError(status, call, -1);
        }
    }

    /** Checks a CUDA runtime allocation status, reporting the requested size on failure. */
    public static void checkAlloc(int status, String call, long bytes) {
        if (status != 0) {
            throw runtimeError(status, call, bytes);
        }
    }

    /** Checks a CUDA driver (CUresult) status. */
    public static void checkDriver(int status, String call) {
        if (status != 0) {
            String name = driverName(status);
            throw make(CudaException.Library.CUDA_DRIVER, status, name, call, -1);
        }
    }

    static CudaException runtimeError(int status, String call, long bytes) {
        String name;
        try {
            BytePointer p = cudart.cudaGetErrorName(status);
            name = p == null ? "?" : p.getString();
        } catch (Throwable t) {
            name = "?";
        }
        return make(CudaException.Library.CUDA_RUNTIME, status, name, call, bytes);
    }

    private static CudaException make(CudaException.Library lib, int status, String name, String call, long bytes) {
        if (isSticky(status)) {
            return new StickyCudaException(lib, status, name, call,
                    "the CUDA context is corrupted; every later call on this device fails (restart the process)");
        }
        if (status == OUT_OF_MEMORY) {
            return new DeviceOutOfMemoryException(lib, status, name, call, bytes,
                    bytes >= 0 ? "could not allocate " + bytes + " bytes" : "");
        }
        return new CudaException(lib, status, name, call, "");
    }

    static String driverName(int status) {
        try (BytePointer out = new BytePointer((long) 8)) {
            org.bytedeco.javacpp.PointerPointer<BytePointer> pp = new org.bytedeco.javacpp.PointerPointer<>(1);
            int rc = cudart.cuGetErrorName(status, pp);
            if (rc == 0 && pp.get(0) != null) {
                String s = new BytePointer(pp.get(0)).getString();
                pp.close();
                return s;
            }
            pp.close();
        } catch (Throwable ignored) {
            // fall through
        }
        return "CUresult " + status;
    }
}
