package dev.gapfill.ops;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The validation rules a property checks (its tags in the inventory, {@link ValidationRule}).
 * {@link RuleCheck#run} fails a try whose cases are not exactly these rules, and
 * {@link ValidationInventoryTest} fails when a rule of the inventory is covered by no property.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@interface Covers {
    ValidationRule[] value();
}
