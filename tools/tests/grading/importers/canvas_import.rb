# Canvas's gradebook import replayed on one file: the parsing, header, assignment and student rules
# of instructure/canvas-lms app/models/gradebook_importer.rb (the copy the search index holds: 36,115
# characters, with custom grade statuses and first/last name columns; its commit is not recorded
# there), written anew here (not Canvas's code), each rule citing the lines it replays, with Ruby's
# own CSV library doing the parsing as in Canvas. Run by Debian's ruby:
#   ruby canvas_import.rb FILE.csv COURSE.json
# COURSE.json is what the course holds: {"students": [{"id": 101, "name": "...", "sortable_name": "...",
# "sis_user_id": "...", "login": "..."}], "assignments": [{"id": 4711, "title": "..."}],
# "scores": {"101": {"4711": "12"}}}. Prints JSON: an error, or the assignments the columns became,
# the columns dropped, the points possible, and per student row the student matched (and how), the
# grades and whether each changes what Canvas has (and whether it would clear a score).
require "csv"
require "json"

def blank?(value) # ActiveSupport's blank? for what CSV gives: nil or only white space
  value.nil? || value.to_s.match?(/\A[[:space:]]*\z/)
end

# Lines 104-124: the converters every cell goes through.
NIL_CONVERTER = lambda do |e|
  e.nil? ? e : raise
rescue
  e
end
DECIMAL_COMMA_TO_PERIOD = lambda do |field|
  if /^-?[0-9.,]+%?$/.match?(field)
    parts = field.split(/[,.]/)
    last = parts.pop
    parts.empty? ? last : [parts.join, last].join(".")
  else
    field
  end
end

# Lines 698-725: ';' when it splits the first three lines into more cells, consistently, than ','.
def semicolon_delimited?(path)
  lines = File.foreach(path).first(3)
  return false if lines.empty?

  counts = {}
  %w[; ,].each do |separator|
    counts[separator] = 0
    sizes = lines.map { |line| CSV.parse_line(line, col_sep: separator)&.size || 0 }
    counts[separator] = sizes.first if sizes.uniq.size == 1
  rescue CSV::MalformedCSVError
    nil
  end
  counts[";"] > counts[","]
end

NON_ASSIGNMENT_COLUMN_HEADERS = [ # lines 472-482
  "Current Score", "Current Points", "Current Grade", "Final Score", "Final Points", "Final Grade",
  "Override Score", "Override Grade", "Override Status"
].freeze

def title_and_id(str) # Assignment.title_and_id (app/models/assignment.rb)
  (str =~ /\A(.*)\s\((\d+)\)\z/) ? [$1, $2] : [str, nil]
end

def replay(path, course)
  out = { "error" => nil, "assignments" => [], "dropped_columns" => [], "points_possible" => {}, "rows" => [] }
  students = course["students"].to_h { |s| [s["id"], s] }
  assignments = course["assignments"].to_h { |a| [a["id"], a] }
  scores = course["scores"] || {}
  header = nil
  columns = nil
  sis_user_id_column = nil
  sis_login_id_column = nil
  negative = 0
  options = { converters: [NIL_CONVERTER, DECIMAL_COMMA_TO_PERIOD], skip_lines: /^[;, ]+$/,
              col_sep: semicolon_delimited?(path) ? ";" : "," } # lines 749-762
  CSV.foreach(path, **options).with_index do |row, number|
    if header.nil? # lines 727-732, 384-420
      header = row
      valid = row.length > 3 && row[0].include?("Student") && row[1].include?("ID") # lines 427-430
      student_columns = 3 # lines 432-458, without first and last name columns or custom columns
      if /SIS\s+Login\s+ID/.match?(row[2])
        sis_login_id_column = 2
        student_columns += 1
      elsif row[2] =~ /SIS\s+User\s+ID/ && row[3] =~ /SIS\s+Login\s+ID/
        extra = /Integration\s+ID/.match?(row[4]) ? 1 : 0
        sis_user_id_column = 2
        sis_login_id_column = 3
        student_columns += 2 + extra
      end
      valid &&= row[student_columns - 1].to_s.include?("Section") # line 417
      unless valid
        out["error"] = "InvalidHeaderRow" # lines 173-177: "Invalid header row", nothing imported
        return out
      end
      candidates = row.drop(student_columns) # lines 484-491: a reserved header anywhere drops the column
      regex = Regexp.new(NON_ASSIGNMENT_COLUMN_HEADERS.join("|"))
      out["dropped_columns"] = candidates.grep(regex)
      columns = candidates.grep_v(regex).map do |name_and_id| # lines 498-513
        title, id = title_and_id(name_and_id)
        existing = assignments[id.to_i] if id
        existing ||= assignments.values.find { |a| a["title"] == name_and_id }
        key = existing ? existing["id"] : (negative -= 1)
        out["assignments"] << { "header" => name_and_id, "id" => key, "title" => existing ? existing["title"] : (title || name_and_id),
                                "new" => existing.nil? }
        [key, row.index(name_and_id)] # lines 401-407: its place in the header
      end
      next
    end
    if row[0]&.include?("Points Possible") # lines 734-738, 549-554
      columns.each { |key, index| out["points_possible"][key.to_s] = row[index] if row[index] }
      next
    end
    next if row.compact.all? { |cell| cell =~ /^\s*(Muted|Manual Posting.*)?\s*$/i } # lines 740-744

    student = nil # lines 556-590
    how = nil
    student_id = row[1]
    if !blank?(student_id) && students.key?(student_id.to_i)
      student = students[student_id.to_i]
      how = "id"
    end
    unless student
      sis_user_id = row[sis_user_id_column] if sis_user_id_column && !blank?(row[sis_user_id_column])
      sis_login_id = row[sis_login_id_column] if sis_login_id_column && !blank?(row[sis_login_id_column])
      student = students.values.find { |s| sis_user_id && s["sis_user_id"] == sis_user_id }
      how = "sis_user_id" if student
      unless student
        student = students.values.find { |s| sis_login_id && s["login"] == sis_login_id }
        how = "sis_login_id" if student
      end
      unless student
        student = students.values.find { |s| s["name"] == row[0] || s["sortable_name"] == row[0] }
        how = student ? "name" : "none: a new student"
      end
    end
    grades = {}
    changes = {}
    columns.each do |key, index| # lines 592-605, 855-872
      grade = row[index]&.strip
      grades[key.to_s] = grade
      current = student && scores.dig(student["id"].to_s, key.to_s)
      no_change = grade == current || ((blank?(current) || current == "-") && (blank?(grade) || grade == "-")) ||
                  (!blank?(current) && !blank?(grade) && format("%.2f", Float(current)) == format("%.2f", Float(grade)))
      changes[key.to_s] = no_change ? "unchanged" : (blank?(grade) ? "clears the score" : "changed")
    end
    out["rows"] << { "line" => number + 1, "student" => student && student["id"], "matched_by" => how,
                     "grades" => grades, "changes" => changes }
  end
  out
rescue CSV::MalformedCSVError => e # lines 79-85: the whole import fails
  { "error" => "MalformedCSVError: #{e.message}" }
end

if ARGV.length != 2
  warn "usage: ruby canvas_import.rb FILE.csv COURSE.json"
  exit 2
end
puts JSON.pretty_generate(replay(ARGV[0], JSON.parse(File.read(ARGV[1]))))
