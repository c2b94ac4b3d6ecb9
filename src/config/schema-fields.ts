// Building blocks of the settings schemas: a typed key with its default and meaning, and an open section.
import { Type } from './typebox.ts';
import type { TSchema } from 'typebox';

export const bool = (def: boolean, description: string) => Type.Boolean({ default: def, description });
export const num = (def: number, description: string, extra: object = {}) => Type.Number({ default: def, description, ...extra });
export const int = (def: number, description: string, extra: object = {}) => Type.Integer({ default: def, description, ...extra });
export const str = (def: string, description: string) => Type.String({ default: def, description });
export const nstr = (description: string) => Type.Union([Type.String(), Type.Null()], { default: null, description });
export const strList = (def: string[], description: string) => Type.Array(Type.String(), { default: def, description });
export const obj = <T extends Record<string, TSchema>>(props: T, description = '') =>
  Type.Object(props, { default: {}, description, additionalProperties: true });
