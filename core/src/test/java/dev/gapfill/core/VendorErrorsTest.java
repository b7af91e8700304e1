package dev.gapfill.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which exception a failed vendor or runtime status becomes (host-side mapping; runs everywhere). */
class VendorErrorsTest {
    @Test void aLibraryThatCannotAllocateIsOutOfMemoryNotAGenericFailure() {
        CudaException blas = VendorHandles.blasError(3, "cublasGemmEx on cuda:0");
        assertInstanceOf(DeviceOutOfMemoryException.class, blas);
        assertEquals(CudaException.Library.CUBLAS, blas.library());
        assertEquals(3, blas.status());
        assertEquals("CUBLAS_STATUS_ALLOC_FAILED", blas.statusName());

        // cuDNN 9: 4004 is a device allocation failure; 4003 (CUDNN_STATUS_ALLOC_FAILED is its deprecated alias) a host one
        CudaException dnn = VendorHandles.dnnError(4004, "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", "cudnnCreate on cuda:0");
        assertInstanceOf(DeviceOutOfMemoryException.class, dnn);
        assertEquals(CudaException.Library.CUDNN, dnn.library());
        assertEquals(4004, dnn.status());
        assertEquals(org.bytedeco.cuda.global.cudnn.CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED, dnn.status());

        CudaException host = VendorHandles.dnnError(4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED", "cudnnCreate on cuda:0");
        assertEquals(org.bytedeco.cuda.global.cudnn.CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, host.status());
        assertTrue(host.getMessage().contains("host memory") && !host.getMessage().contains("device memory"), host.getMessage());

        for (CudaException other : new CudaException[] {VendorHandles.blasError(7, "x"), VendorHandles.blasError(13, "x"), host,
                VendorHandles.dnnError(2000, "CUDNN_STATUS_BAD_PARAM", "x"), VendorHandles.dnnError(5000, "EXECUTION_FAILED", "x")}) {
            assertFalse(other instanceof DeviceOutOfMemoryException, other.toString());
            assertFalse(other instanceof StickyCudaException, other.toString());
        }
    }

    @Test void statusesThatEndTheContextAreSticky() {
        // driver_types.h: "any further CUDA work will return the same error" (contained, tensor memory leak) or "the
        // device cannot be used again" (assert), besides the classic kernel faults
        // ... and an external device's error (911: "the process must be terminated and relaunched")
        // ... and a destroyed context (709, since the fiftieth session: its modules, streams and pool are gone)
        for (int s : new int[] {226, 700, 709, 710, 714, 715, 716, 717, 718, 719, 721, 911}) {
            assertTrue(CudaErrors.isSticky(s), "status " + s);
            assertInstanceOf(StickyCudaException.class, CudaErrors.runtimeError(s, "cudaStreamSynchronize", -1), "status " + s);
        }
        for (int s : new int[] {1, 2, 46, 98, 201, 400, 701, 720, 906}) {  // 906: a capture elsewhere refused a sync
            assertFalse(CudaErrors.isSticky(s), "status " + s);
        }
    }
}
