import { cn } from "../lib/cn";

interface AvatarProps {
  user: { name: string; avatarUrl: string | null };
  size?: "sm" | "md";
}

export function Avatar({ user, size = "md" }: AvatarProps) {
  const initials = user.name
    .split(/\s+/)
    .slice(0, 2)
    .map((part) => part[0]?.toUpperCase() ?? "")
    .join("");
  const dimension = size === "sm" ? "h-6 w-6 text-xs" : "h-8 w-8 text-sm";

  if (user.avatarUrl) {
    return <img src={user.avatarUrl} alt={user.name} width={32} height={32} loading="lazy" className={cn("rounded-full", dimension)} />;
  }
  return (
    <span title={user.name} className={cn("inline-flex items-center justify-center rounded-full bg-accent/15 font-medium text-accent", dimension)}>
      <span aria-hidden>{initials}</span>
      <span className="sr-only">{user.name}</span>
    </span>
  );
}
