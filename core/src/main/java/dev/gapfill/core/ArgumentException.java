package dev.gapfill.core;

/**
 * An argument is invalid. Thrown before any launch; the message names the argument, what was
 * expected and what was received, e.g. {@code b: expected shape [batch=4096, k=64, n=*], got [4096, 32, 64]}.
 */
public class ArgumentException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String argument;
    private final String expected;
    private final String received;

    public ArgumentException(String argument, String expected, String received) {
        super(argument + ": expected " + expected + ", got " + received);
        this.argument = argument;
        this.expected = expected;
        this.received = received;
    }

    /** Name of the offending argument as the public API spells it. */
    public String argument() { return argument; }

    public String expected() { return expected; }

    public String received() { return received; }
}
