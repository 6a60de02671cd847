import { z } from 'zod';

export const FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'] as const;

/**
 * One entry of a tool file's `fields` list: the short way to declare flat arguments without
 * writing JSON Schema. `items` (arrays only) is a type name or a JSON Schema for each element.
 */
export const fieldSchema = z
  .strictObject({
    name: z.string().min(1).max(128),
    type: z.enum(FIELD_TYPES).default('string'),
    description: z.string().optional(),
    required: z.boolean().default(false),
    default: z.unknown().optional(),
    enum: z
      .array(z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .min(1)
      .optional(),
    items: z.union([z.enum(FIELD_TYPES), z.record(z.string(), z.unknown())]).optional(),
  })
  .refine((field) => field.items === undefined || field.type === 'array', {
    message: '"items" is only allowed for type "array"',
    path: ['items'],
  });

export const fieldListSchema = z.array(fieldSchema).superRefine((fields, context) => {
  const seen = new Set<string>();
  fields.forEach((field, index) => {
    if (seen.has(field.name)) context.addIssue({ code: 'custom', message: `field "${field.name}" is declared twice`, path: [index, 'name'] });
    seen.add(field.name);
  });
});

export type ToolField = z.output<typeof fieldSchema>;

/**
 * The JSON Schema of a `fields` list: an object of exactly those properties
 * (`additionalProperties: false`, so that a misspelt argument is reported to the model rather
 * than silently dropped), the required ones listed.
 */
export function fieldsToJsonSchema(fields: ToolField[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const field of fields) {
    const property: Record<string, unknown> = { type: field.type };
    if (field.description !== undefined) property.description = field.description;
    if (field.enum !== undefined) property.enum = field.enum;
    if (field.default !== undefined) property.default = field.default;
    if (field.items !== undefined) property.items = typeof field.items === 'string' ? { type: field.items } : field.items;
    properties[field.name] = property;
  }
  const required = fields.filter((field) => field.required).map((field) => field.name);
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}
