package dev.gapfill.core;

import org.bytedeco.javacpp.Pointer;

/** A non-owning JavaCPP pointer to a raw device address, for passing addresses into the presets. */
public final class DevicePointer extends Pointer {
    public DevicePointer(long address) {
        super((Pointer) null);
        this.address = address;
    }
}
