package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.testing.GpuTest;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import static dev.gapfill.ops.ValidationRule.*;

/** GPU variants of {@link TensorValidationProperties}: the same rules with device tensors on cuda:0, plus the stream rules. */
@GpuTest
class TensorValidationGpuProperties {
    private static final Device GPU = Device.cuda(0);

    @Property(tries = 8)
    @Covers({T_DEVICE_NULL, T_DTYPE_NULL, T_SHAPE_NULL, T_SHAPE_NONPOSITIVE, T_SHAPE_OVERFLOW, T_BYTES_OVERFLOW, T_CPU_TOO_LARGE,
            T_DATA_NULL, T_DATA_LENGTH, T_OF_INTEGER_DTYPE, T_STREAM_NULL, T_BORROW_ON_CPU, T_BORROW_ADDRESS_NULL,
            T_BORROW_ADDRESS_MISALIGNED, T_BORROW_STRIDES_RANK, T_BORROW_STRIDES_NEGATIVE, T_BORROW_SPAN_OVERFLOW,
            T_ORDINAL_NEGATIVE, T_STREAM_CLOSED, T_STREAM_DEVICE, T_ORDINAL_ABSENT})
    void factories(@ForAll @IntRange(min = 0, max = 4) int dti, @ForAll @IntRange(min = 1, max = 3) int rank, @ForAll @IntRange(min = 1, max = 9) int d0,
                   @ForAll @IntRange(min = 1, max = 9) int d1, @ForAll @IntRange(min = 1, max = 9) int d2, @ForAll long seed) {
        DType dt = TensorValidationProperties.ALL[dti];
        long[] s = TensorValidationProperties.shape(rank, d0, d1, d2);
        try (Fixture f = new Fixture(GPU, seed)) {
            RuleCheck.run(f, TensorValidationProperties.factoryCases(f, dt, s), () -> TensorValidationProperties.validFactories(f, dt, s));
        }
    }

    @Property(tries = 8)
    @Covers({V_CLOSED, V_RESHAPE_SHAPE, V_RESHAPE_NUMEL, V_RESHAPE_NONCONTIGUOUS, V_STRIDED_SHAPE, V_STRIDED_STRIDES_NULL,
            V_STRIDED_STRIDES_RANK, V_STRIDED_STRIDES_NEGATIVE, V_STRIDED_OFFSET_NEGATIVE, V_STRIDED_OUT_OF_BOUNDS,
            V_STRIDED_SPAN_OVERFLOW})
    void views(@ForAll @IntRange(min = 0, max = 4) int dti, @ForAll @IntRange(min = 1, max = 3) int rank, @ForAll @IntRange(min = 1, max = 9) int d0,
               @ForAll @IntRange(min = 1, max = 9) int d1, @ForAll @IntRange(min = 1, max = 9) int d2, @ForAll long seed) {
        DType dt = TensorValidationProperties.ALL[dti];
        long[] s = TensorValidationProperties.shape(rank, d0, d1, d2);
        try (Fixture f = new Fixture(GPU, seed)) {
            RuleCheck.run(f, TensorValidationProperties.viewCases(f, dt, s), () -> TensorValidationProperties.validViews(f, dt, s));
        }
    }

    @Property(tries = 8)
    @Covers({C_CLOSED, C_FLOAT_DTYPE, C_INTEGER_DTYPE, C_DATA_NULL, C_DATA_LENGTH, C_SRC_NULL, C_SRC_LENGTH, C_NONCONTIGUOUS,
            C_TO_DEVICE_NULL, C_TO_NONCONTIGUOUS_DEVICE, C_INDEX_RANGE, C_CLOSE_TWICE, C_WRONG_SIDE, C_FILL_STREAM_CLOSED,
            C_FILL_STREAM_DEVICE})
    void copies(@ForAll @IntRange(min = 0, max = 4) int dti, @ForAll @IntRange(min = 1, max = 3) int rank, @ForAll @IntRange(min = 1, max = 9) int d0,
                @ForAll @IntRange(min = 1, max = 9) int d1, @ForAll @IntRange(min = 1, max = 9) int d2, @ForAll long seed) {
        DType dt = TensorValidationProperties.ALL[dti];
        long[] s = TensorValidationProperties.shape(rank, d0, d1, d2);
        try (Fixture f = new Fixture(GPU, seed)) {
            RuleCheck.run(f, TensorValidationProperties.copyCases(f, dt, s), () -> TensorValidationProperties.validCopies(f, dt, s));
        }
    }

    @Property(tries = 4)
    @Covers({B_NULL, B_PROPERTY})
    void backend(@ForAll @IntRange(min = 1, max = 12) int len, @ForAll long seed) {
        try (Fixture f = new Fixture(GPU, seed)) {
            RuleCheck.run(f, TensorValidationProperties.backendCases(f, len), () -> Backend.resolve(Backend.AUTO));
        }
    }
}
