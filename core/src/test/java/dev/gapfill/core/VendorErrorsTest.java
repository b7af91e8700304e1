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

        CudaException dnn = VendorHandles.dnnError(4003, "CUDNN_STATUS_ALLOC_FAILED", "cudnnCreate on cuda:0");
        assertInstanceOf(DeviceOutOfMemoryException.class, dnn);
        assertEquals(CudaException.Library.CUDNN, dnn.library());

        for (CudaException other : new CudaException[] {VendorHandles.blasError(7, "x"), VendorHandles.blasError(13, "x"),
                VendorHandles.dnnError(2000, "CUDNN_STATUS_BAD_PARAM", "x"), VendorHandles.dnnError(5000, "EXECUTION_FAILED", "x")}) {
            assertFalse(other instanceof DeviceOutOfMemoryException, other.toString());
            assertFalse(other instanceof StickyCudaException, other.toString());
        }
    }

    @Test void statusesThatEndTheContextAreSticky() {
        // driver_types.h: "any further CUDA work will return the same error" (contained, tensor memory leak) or "the
        // device cannot be used again" (assert), besides the classic kernel faults
        for (int s : new int[] {226, 700, 710, 714, 715, 716, 717, 718, 719, 721}) {
            assertTrue(CudaErrors.isSticky(s), "status " + s);
            assertInstanceOf(StickyCudaException.class, CudaErrors.runtimeError(s, "cudaStreamSynchronize", -1), "status " + s);
        }
        for (int s : new int[] {1, 2, 46, 98, 201, 400, 701, 720}) {
            assertFalse(CudaErrors.isSticky(s), "status " + s);
        }
    }
}
