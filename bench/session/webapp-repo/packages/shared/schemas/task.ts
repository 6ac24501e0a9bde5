import { z } from "zod";

export const taskStatus = z.enum(["todo", "in_progress", "done"]);
export type TaskStatus = z.infer<typeof taskStatus>;

// ProseMirror document; the editor and <RichText> own its inner shape.
export const richText = z.object({ type: z.literal("doc"), content: z.array(z.unknown()) });

export const taskId = z.string().cuid();

export const createTaskBody = z.object({
  title: z.string().trim().min(1).max(200),
  description: richText.optional(),
  status: taskStatus.default("todo"),
  assigneeId: z.string().cuid().nullable().optional(),
  dueAt: z.string().datetime().nullable().optional(),
});
export type CreateTaskBody = z.infer<typeof createTaskBody>;

export const updateTaskBody = createTaskBody
  .partial()
  .extend({ position: z.number().int().min(0).optional() })
  .refine((body) => Object.keys(body).length > 0, { message: "empty_update" });
export type UpdateTaskBody = z.infer<typeof updateTaskBody>;

export const taskSummary = z.object({
  id: z.string(),
  projectId: z.string(),
  title: z.string(),
  status: taskStatus,
  position: z.number(),
  dueAt: z.string().datetime().nullable(),
  assignee: z.object({ id: z.string(), name: z.string(), avatarUrl: z.string().nullable() }).nullable(),
  version: z.number().int(),
});
export type TaskSummary = z.infer<typeof taskSummary>;

export const taskDetail = taskSummary.extend({
  description: richText.nullable(),
  createdAt: z.string().datetime(),
  doneAt: z.string().datetime().nullable(),
});
export type TaskDetail = z.infer<typeof taskDetail>;

export const listQuery = z.object({
  cursor: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

export const page = <T extends z.ZodTypeAny>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().nullable() });
