// TypeBox as Gantry uses it: the schema builders and value functions it calls, by name (src/ imports them from here).
// TypeBox's own `Type` and `Value` namespaces hold all of TypeBox (its TypeScript-syntax parser, codecs, conversions),
// which the bundle then keeps whole: ≈ 65 KB more source held in memory all day and ≈ 0.15 MB of idle RSS (Node 26,
// bench/memory.ts). A builder not listed here is a type error where it is used: add it to the list.
import { Array, Boolean, Integer, Literal, Null, Number, Object, Optional, Record, String, Union, Unknown, Unsafe } from 'typebox';
import { Check, Default, Errors } from 'typebox/value';

export const Type = { Array, Boolean, Integer, Literal, Null, Number, Object, Optional, Record, String, Union, Unknown, Unsafe } as const;
export const Value = { Check, Default, Errors } as const;
