/**
 * A labelled choice among named things (workloads, profiles), as the run and experiment forms
 * lay one out. The select keeps its own aria-label, the name tests and screen readers find it by.
 */
export function NameSelectField(props: {
  label: string;
  ariaLabel: string;
  value: string;
  /** Each choice's value, and what it shows where that is not its value. */
  items: readonly { name: string; label?: string }[];
  onChange: (name: string) => void;
}) {
  return (
    <label>
      {props.label}{' '}
      <select aria-label={props.ariaLabel} value={props.value} onChange={(event) => props.onChange(event.target.value)}>
        {props.items.map((item) => (
          <option key={item.name} value={item.name}>
            {item.label ?? item.name}
          </option>
        ))}
      </select>
    </label>
  );
}
