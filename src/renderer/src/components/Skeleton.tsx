/** Placeholder rows while a list loads, so a view never sits blank and never claims to be empty before it knows. */
export function RowsSkeleton({ label, rows = 4 }: { label: string; rows?: number }) {
  return (
    <div className="skeleton" role="status" aria-busy="true" aria-label={label} data-testid="skeleton">
      {Array.from({ length: rows }, (_, index) => (
        <div key={index} className="skeleton-row" />
      ))}
      <small>{label}</small>
    </div>
  );
}
